/* Error reporting shared by every layer: a status plus a thread-local
 * message, so a failing call deep in the stack can explain itself without
 * threading buffers through every signature. */
#ifndef WGML_ERROR_H
#define WGML_ERROR_H

#include "wgml.h"

#if defined(__GNUC__)
#define WG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define WG_PRINTF(a, b)
#endif

/* Records the message for wgml_last_error() and returns s, so callers can
 * write `return wg_fail(WGML_ERR_LIMIT, "...", ...);`. */
wgml_status wg_fail(wgml_status s, const char *fmt, ...) WG_PRINTF(2, 3);
/* Like wg_fail, but keeps the current message and prefixes it. */
wgml_status wg_failp(wgml_status s, const char *fmt, ...) WG_PRINTF(2, 3);

#endif
