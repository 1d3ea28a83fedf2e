#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_msg[2048];

const char *wgml_last_error(void) { return last_msg; }

const char *wgml_status_name(wgml_status s)
{
    switch (s) {
    case WGML_OK: return "WGML_OK";
    case WGML_ERR_INVALID_ARG: return "WGML_ERR_INVALID_ARG";
    case WGML_ERR_NO_ADAPTER: return "WGML_ERR_NO_ADAPTER";
    case WGML_ERR_DEVICE: return "WGML_ERR_DEVICE";
    case WGML_ERR_DEVICE_LOST: return "WGML_ERR_DEVICE_LOST";
    case WGML_ERR_OOM: return "WGML_ERR_OOM";
    case WGML_ERR_LIMIT: return "WGML_ERR_LIMIT";
    case WGML_ERR_SHADER: return "WGML_ERR_SHADER";
    case WGML_ERR_UNSUPPORTED: return "WGML_ERR_UNSUPPORTED";
    case WGML_ERR_IO: return "WGML_ERR_IO";
    case WGML_ERR_TIMEOUT: return "WGML_ERR_TIMEOUT";
    case WGML_ERR_SHAPE: return "WGML_ERR_SHAPE";
    case WGML_ERR_DTYPE: return "WGML_ERR_DTYPE";
    case WGML_ERR_INDEX: return "WGML_ERR_INDEX";
    case WGML_ERR_INTERNAL: return "WGML_ERR_INTERNAL";
    }
    return "WGML_ERR_UNKNOWN";
}

wgml_status wg_fail(wgml_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    return s;
}

wgml_status wg_failp(wgml_status s, const char *fmt, ...)
{
    char prev[sizeof last_msg];
    memcpy(prev, last_msg, sizeof prev);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    va_end(ap);
    size_t used = n < 0 ? 0 : (size_t)n;
    if (used + 3 < sizeof last_msg) {
        size_t pl = strlen(prev), room = sizeof last_msg - used - 3;
        memcpy(last_msg + used, ": ", 2);
        memcpy(last_msg + used + 2, prev, pl < room ? pl : room);
        last_msg[used + 2 + (pl < room ? pl : room)] = 0;
    }
    return s;
}

wgml_status wgml_error(wgml_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (fmt)
        vsnprintf(last_msg, sizeof last_msg, fmt, ap);
    else
        last_msg[0] = 0;
    va_end(ap);
    return s;
}
