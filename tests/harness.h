/* A tiny test harness: CHECK records a failure and keeps going, so one run
 * reports every broken case; main() ends with "N passed, N failed". */
#ifndef WGML_TEST_HARNESS_H
#define WGML_TEST_HARNESS_H

#include "wgml.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int t_failed_checks;

/* Set by op tests (op_harness.h t_setup): t_run then also reports the
 * pipelines each case compiled, so a slow case shows whether its time went
 * to lavapipe's compiles or to running kernels. */
static wgml_ctx *t_stats_ctx;
/* wgml_ctx_stats_get, through a pointer: the *_asan tests link harness
 * users without the library. */
static wgml_status (*t_stats_get)(wgml_ctx *, wgml_ctx_stats *);

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            t_failed_checks++;                                                  \
            printf("    check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                                \
            printf("\n");                                                       \
        }                                                                       \
    } while (0)

/* Checks a status is OK, printing the library's message otherwise. */
#define CHECK_OK(expr)                                                          \
    do {                                                                        \
        wgml_status s_ = (expr);                                                \
        CHECK(s_ == WGML_OK, "%s: %s", wgml_status_name(s_), wgml_last_error()); \
    } while (0)

typedef struct t_case {
    const char *name;
    void (*fn)(void);
} t_case;

static inline double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs the cases (those whose name contains `only`, when given); each
 * result line ends with the case's wall time and, on op tests, the
 * pipelines it compiled (CI time: see tests/CMakeLists.txt). */
static inline int t_run(const t_case *cases, size_t n, const char *only)
{
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (only && !strstr(cases[i].name, only))
            continue;
        int before = t_failed_checks;
        printf("[ RUN  ] %s\n", cases[i].name);
        fflush(stdout);
        wgml_ctx_stats s0 = {0}, s1 = {0};
        if (t_stats_ctx && t_stats_get)
            t_stats_get(t_stats_ctx, &s0);
        double t0 = t_now();
        cases[i].fn();
        double dt = t_now() - t0;
        char extra[64] = "";
        if (t_stats_ctx && t_stats_get && t_stats_get(t_stats_ctx, &s1) == WGML_OK)
            snprintf(extra, sizeof extra, ", %llu compiles",
                     (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled));
        if (t_failed_checks == before) {
            passed++;
            printf("[  OK  ] %s (%.2f s%s)\n", cases[i].name, dt, extra);
        } else {
            failed++;
            printf("[ FAIL ] %s (%.2f s%s)\n", cases[i].name, dt, extra);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* xorshift64*.  The seed is fixed (CI must be deterministic: a red run
 * has to say something about the change it tested) unless WGML_TEST_SEED
 * names one; `make soak` (scripts/soak.sh) passes fresh random seeds that
 * way and reports the first one that fails. */
#define T_DEFAULT_SEED 0x9e3779b97f4a7c15ull
static uint64_t t_rng_state;
static inline void t_seed(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *s = getenv("WGML_TEST_SEED");
    t_rng_state = s && *s ? strtoull(s, NULL, 0) : T_DEFAULT_SEED;
    if (!t_rng_state)
        t_rng_state = 1;
    printf("seed %llu (%s; set WGML_TEST_SEED to change it)\n", (unsigned long long)t_rng_state,
           s && *s ? "from WGML_TEST_SEED" : "fixed");
}
static inline uint64_t t_rand(void)
{
    t_rng_state ^= t_rng_state >> 12;
    t_rng_state ^= t_rng_state << 25;
    t_rng_state ^= t_rng_state >> 27;
    return t_rng_state * 2685821657736338717ull;
}
static inline uint64_t t_range(uint64_t lo, uint64_t hi) { return lo + t_rand() % (hi - lo + 1); }

/* The WGML_* knobs that tests switch.  t_env_reserve gives each a value
 * ("", which every knob reads as unset) before any context exists, and
 * t_env then only ever replaces values: glibc's setenv reallocates the
 * environment array when it adds a variable (and unsetenv shifts it), and
 * a getenv running meanwhile on one of the driver's threads (lavapipe
 * compiles on its own) read freed memory: test_op_attention segfaulted
 * inside getenv once in CI (2026-11-26) after an unsetenv / setenv pair of
 * WGML_FORCE.  With each variable kept, setenv only swaps its pointer. */
static const char *const t_knobs[] = {"WGML_DISABLE",     "WGML_FORCE",   "WGML_GRAPH_FUSE",
                                      "WGML_GRAPH_NANCHECK", "WGML_MAX_BINDING", "WGML_POOL_MB",
                                      "WGML_REPLAY_THREADS", "WGML_REPLAY_WHOLE", "WGML_MV_XS_WGS",
                                      "WGML_GEMM_KU", "WGML_GEMM_FAST", "WGML_DUMP_KERNELS", "WGML_LLM_NEOX_PAIRS", "WGML_MV_XS_LANES",
                                      "WGML_PFFN_WGS"};
static int t_env_reserved;

static inline void t_env_reserve(void)
{
    for (size_t i = 0; i < sizeof t_knobs / sizeof *t_knobs; i++)
        setenv(t_knobs[i], "", 0); /* a value the environment gives is kept */
    t_env_reserved = 1;
}

/* Sets knob `name` to value, or back to unset ("") for NULL. */
static inline void t_env(const char *name, const char *value)
{
    int known = 0;
    for (size_t i = 0; i < sizeof t_knobs / sizeof *t_knobs; i++)
        known |= !strcmp(t_knobs[i], name);
    if (!known || !t_env_reserved) {
        t_failed_checks++;
        printf("    t_env(%s): not reserved (add it to t_knobs; call t_env_reserve first)\n", name);
    }
    setenv(name, value ? value : "", 1);
}

/* Whether knob `name` has a value (reserved knobs read "" when unset). */
static inline int t_env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* Seeds the generator and creates the test context; 1 (after printing
 * why, in the "N passed, N failed" form ctest logs show) when it fails. */
static inline int t_open_ctx(wgml_ctx **ctx)
{
    t_env_reserve();
    t_seed();
    wgml_status st = wgml_ctx_create(NULL, ctx);
    if (st != WGML_OK) {
        printf("cannot create a context: %s: %s\n0 passed, 1 failed\n", wgml_status_name(st), wgml_last_error());
        return 1;
    }
    return 0;
}

#endif
