/* The kernel tables grow: a context holds thousands of distinct kernels
 * (the table was a fixed 1,024 slots), each still works, and asking again
 * is a cache hit that compiles nothing (wgml_ctx_stats.pipelines_compiled:
 * what a graph's "rebinding compiles no pipeline" check reads). */
#include "gpu/runtime.h"
#include "harness.h"

static wgml_ctx *ctx;

/* Past the old table's 1,024 slots, so both tables grow at least three
 * times (256 -> 512 -> 1,024 -> 2,048 slots at 5/8 load); 1,100 rather
 * than 2,100 halves the test's ~39 s of lavapipe compiles in CI. */
enum { N = 1100 };

static void kernel_src(char *buf, size_t n, int i)
{
    snprintf(buf, n,
             "@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n"
             "@compute @workgroup_size(1) fn main() { o[%du] = %uu; }\n", i, 7u * (unsigned)i + 1u);
}

/* N custom kernels, each writing its own word: all compile once, all run,
 * and a second request of each returns the same kernel from the table. */
static void t_many_custom_kernels(void)
{
    static wgml_kernel *ks[N];
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, N * 4, &b));
    if (!b)
        return;
    wgml_ctx_stats s0, s1, s2;
    wgml_ctx_stats_get(ctx, &s0);
    char src[256], name[32];
    for (int i = 0; i < N; i++) {
        kernel_src(src, sizeof src, i);
        snprintf(name, sizeof name, "k%d", i);
        wgml_kernel_desc d = {name, src, "main", 1, 0};
        wgml_status st = wgml_kernel_create(ctx, &d, &ks[i]);
        if (st != WGML_OK) {
            CHECK(0, "kernel %d: %s: %s", i, wgml_status_name(st), wgml_last_error());
            return;
        }
        CHECK_OK(wgml_dispatch(ctx, ks[i], &b, 1, NULL, 0, 1, 1, 1));
    }
    wgml_ctx_stats_get(ctx, &s1);
    CHECK(s1.pipelines_compiled - s0.pipelines_compiled == N, "%llu compiles for %d kernels",
          (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled), N);
    uint32_t *got = malloc(N * 4);
    CHECK_OK(wgml_buffer_read(b, 0, got, N * 4));
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (got[i] != 7u * (unsigned)i + 1u && bad++ < 3)
            printf("    word %d = %u, want %u\n", i, got[i], 7u * (unsigned)i + 1u);
    CHECK(bad == 0, "%d kernels did not write their word", bad);
    free(got);
    int other = 0;
    for (int i = 0; i < N; i++) {
        kernel_src(src, sizeof src, i);
        wgml_kernel_desc d = {"again", src, "main", 1, 0};
        wgml_kernel *k = NULL;
        CHECK_OK(wgml_kernel_create(ctx, &d, &k));
        other += k != ks[i];
    }
    wgml_ctx_stats_get(ctx, &s2);
    CHECK(other == 0, "%d second requests returned another kernel", other);
    CHECK(s2.pipelines_compiled == s1.pipelines_compiled, "second requests compiled %llu pipelines",
          (unsigned long long)(s2.pipelines_compiled - s1.pipelines_compiled));
    CHECK(s2.pipeline_cache_hits - s1.pipeline_cache_hits == N, "%llu cache hits for %d requests",
          (unsigned long long)(s2.pipeline_cache_hits - s1.pipeline_cache_hits), N);
    wgml_buffer_destroy(b);
}

/* N template references that differ only in an unused define: N entries
 * in the reference table, all expanding to one source, so one pipeline. */
static void t_many_kernel_refs(void)
{
    wgml_ctx_stats s0, s1, s2;
    wgml_ctx_stats_get(ctx, &s0);
    wgml_kernel *first = NULL;
    int other = 0;
    char defs[32];
    for (int round = 0; round < 2; round++) {
        if (round == 1)
            wgml_ctx_stats_get(ctx, &s1);
        for (int i = 0; i < N; i++) {
            snprintf(defs, sizeof defs, "MARK;UNUSED_%d", i);
            wg_kernel_ref ref = {"selfcheck.wgsl", "mark_u32", defs, 1, 0};
            wgml_kernel *k = NULL;
            CHECK_OK(wg_kernel_get(ctx, &ref, &k));
            first = first ? first : k;
            other += k != first;
        }
    }
    wgml_ctx_stats_get(ctx, &s2);
    CHECK(other == 0, "%d references gave another kernel", other);
    CHECK(s2.pipelines_compiled - s0.pipelines_compiled <= 1, "%llu compiles for one source",
          (unsigned long long)(s2.pipelines_compiled - s0.pipelines_compiled));
    CHECK(s2.pipeline_cache_hits - s1.pipeline_cache_hits == N, "second round: %llu hits for %d requests",
          (unsigned long long)(s2.pipeline_cache_hits - s1.pipeline_cache_hits), N);
    /* and the shared kernel runs */
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 64 * 4, &b));
    uint32_t prm[4] = {64, 5, 0, 0}, got[64] = {0};
    if (b && first) {
        CHECK_OK(wgml_dispatch(ctx, first, &b, 1, prm, sizeof prm, 1, 1, 1));
        CHECK_OK(wgml_buffer_read(b, 0, got, sizeof got));
    }
    CHECK(got[0] == 5 && got[63] == 68, "mark kernel wrote %u .. %u", got[0], got[63]);
    wgml_buffer_destroy(b);
}

int main(int argc, char **argv)
{
    if (t_open_ctx(&ctx))
        return 1;
    static const t_case cases[] = {
        {"more_than_2000_custom_kernels", t_many_custom_kernels},
        {"more_than_2000_kernel_refs", t_many_kernel_refs},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(ctx);
    return rc;
}
