/* Runtime tests: buffers, fill, copy, dispatch streams, grid folding,
 * caches and profiling, on whatever adapter wgml picks (lavapipe in CI). */
#include "gpu/internal.h"
#include "harness.h"

#include <sys/stat.h>
#include <unistd.h>

static wgml_ctx *ctx;

static void rand_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)t_rand();
}

/* Writes random bytes at random odd offsets and sizes, mirroring on the
 * host; every read-back (whole and sub-range) must match the mirror. */
static void t_roundtrip_odd(void)
{
    const size_t size = 100003;
    uint8_t *mirror = calloc(size, 1), *got = malloc(size), *src = malloc(size);
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, size, &b));
    if (!b)
        return;
    CHECK(wgml_buffer_size(b) == size, "size %llu", (unsigned long long)wgml_buffer_size(b));
    CHECK_OK(wgml_buffer_read(b, 0, got, size));
    CHECK(memcmp(got, mirror, size) == 0, "new buffer is not zeroed");
    for (int it = 0; it < 60; it++) {
        size_t off = t_range(0, size - 1);
        size_t n = it < 20 ? t_range(0, 9) : t_range(0, size - off);
        if (n > size - off)
            n = size - off;
        rand_bytes(src, n);
        CHECK_OK(wgml_buffer_write(b, off, src, n));
        memcpy(mirror + off, src, n);
        size_t roff = t_range(0, size - 1), rn = t_range(0, size - roff);
        memset(got, 0xee, size);
        CHECK_OK(wgml_buffer_read(b, roff, got, rn));
        CHECK(memcmp(got, mirror + roff, rn) == 0, "iteration %d: write [%zu,+%zu) read [%zu,+%zu) differs", it,
              off, n, roff, rn);
    }
    CHECK_OK(wgml_buffer_read(b, 0, got, size));
    CHECK(memcmp(got, mirror, size) == 0, "final contents differ");
    wgml_buffer_destroy(b);
    free(mirror);
    free(got);
    free(src);
}

static void t_sizes(void)
{
    /* 1..9 byte buffers, and a zero-size one. */
    for (uint64_t size = 0; size < 10; size++) {
        wgml_buffer *b = NULL;
        uint8_t in[16], out[16];
        rand_bytes(in, sizeof in);
        CHECK_OK(wgml_buffer_create(ctx, size, &b));
        if (!b)
            continue;
        CHECK_OK(wgml_buffer_write(b, 0, in, size));
        memset(out, 0, sizeof out);
        CHECK_OK(wgml_buffer_read(b, 0, out, size));
        CHECK(memcmp(in, out, size) == 0, "size %llu", (unsigned long long)size);
        wgml_buffer_destroy(b);
    }
}

static void t_fill(void)
{
    const size_t size = 70001;
    uint8_t *mirror = malloc(size), *got = malloc(size);
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, size, &b));
    if (!b)
        return;
    rand_bytes(mirror, size);
    CHECK_OK(wgml_buffer_write(b, 0, mirror, size));
    for (int it = 0; it < 40; it++) {
        size_t off = t_range(0, size - 1), n = it % 4 == 0 ? t_range(0, 7) : t_range(0, size - off);
        if (n > size - off)
            n = size - off;
        uint32_t pat = (uint32_t)t_rand();
        CHECK_OK(wgml_buffer_fill(b, off, n, pat));
        for (size_t a = off; a < off + n; a++)
            mirror[a] = (uint8_t)(pat >> (8 * (a % 4)));
    }
    CHECK_OK(wgml_buffer_read(b, 0, got, size));
    CHECK(memcmp(got, mirror, size) == 0, "fill contents differ");
    float one = 0;
    CHECK_OK(wgml_buffer_fill(b, 8, 4, 0x3f800000u));
    CHECK_OK(wgml_buffer_read(b, 8, &one, 4));
    CHECK(one == 1.0f, "f32 pattern gave %g", one);
    wgml_buffer_destroy(b);
    free(mirror);
    free(got);
}

static void t_copy(void)
{
    const size_t size = 65537;
    uint8_t *ma = malloc(size), *mb = malloc(size), *got = malloc(size), *tmp = malloc(size);
    wgml_buffer *a = NULL, *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, size, &a));
    CHECK_OK(wgml_buffer_create(ctx, size, &b));
    if (!a || !b)
        return;
    rand_bytes(ma, size);
    rand_bytes(mb, size);
    CHECK_OK(wgml_buffer_write(a, 0, ma, size));
    CHECK_OK(wgml_buffer_write(b, 0, mb, size));
    for (int it = 0; it < 60; it++) {
        /* Cycle through the kernel variants: vec4, word and byte aligned,
         * then same-buffer copies, overlapping or not. */
        int kind = it % 5;
        size_t align = kind == 0 ? 16 : kind == 1 ? 4 : 1;
        size_t n = t_range(0, size / 3);
        size_t so = t_range(0, size - n) / align * align, dof = t_range(0, size - n) / align * align;
        if (kind < 3) {
            CHECK_OK(wgml_buffer_copy(b, dof, a, so, n));
            memcpy(mb + dof, ma + so, n);
        } else {
            if (kind == 4) /* force an overlap */
                dof = so + n / 2 <= size - n ? so + n / 2 : so;
            CHECK_OK(wgml_buffer_copy(b, dof, b, so, n));
            memcpy(tmp, mb + so, n);
            memcpy(mb + dof, tmp, n);
        }
    }
    CHECK_OK(wgml_buffer_read(b, 0, got, size));
    CHECK(memcmp(got, mb, size) == 0, "copy contents differ");
    CHECK_OK(wgml_buffer_read(a, 0, got, size));
    CHECK(memcmp(got, ma, size) == 0, "copy source was modified");
    wgml_buffer_destroy(a);
    wgml_buffer_destroy(b);
    free(ma);
    free(mb);
    free(got);
    free(tmp);
}

/* Buffers larger than one storage binding: fill, copy and upload walk
 * binding-sized windows. */
static void t_larger_than_binding(void)
{
    uint64_t bind = ctx->limits.maxStorageBufferBindingSize;
    uint64_t size = bind + bind / 2 + 12345;
    if (size > ctx->limits.maxBufferSize || size > (1ull << 31)) {
        printf("    maxStorageBufferBindingSize %llu: too large to test here\n", (unsigned long long)bind);
        return;
    }
    wgml_buffer *a = NULL, *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, size, &a));
    CHECK_OK(wgml_buffer_create(ctx, size, &b));
    if (!a || !b)
        return;
    uint8_t *m = malloc(size), *got = malloc(size);
    rand_bytes(m, size);
    CHECK_OK(wgml_buffer_write(a, 0, m, size));
    CHECK_OK(wgml_buffer_fill(b, 0, size, 0xdeadbeefu));
    /* Unaligned offsets on both sides: the byte kernel, across windows. */
    uint64_t so = 3, dof = 6, n = size - 11;
    CHECK_OK(wgml_buffer_copy(b, dof, a, so, n));
    CHECK_OK(wgml_buffer_read(b, 0, got, size));
    int bad = 0;
    for (uint64_t i = 0; i < size; i++) {
        uint8_t want = i >= dof && i < dof + n ? m[i - dof + so] : (uint8_t)(0xdeadbeefu >> (8 * (i % 4)));
        if (got[i] != want && bad++ < 3)
            printf("    byte %llu: got %02x want %02x\n", (unsigned long long)i, got[i], want);
    }
    CHECK(bad == 0, "%d bytes differ", bad);
    /* Aligned copy of the whole thing: the vec4 kernel across windows. */
    CHECK_OK(wgml_buffer_copy(b, 0, a, 0, size));
    CHECK_OK(wgml_buffer_read(b, 0, got, size));
    CHECK(memcmp(got, m, size) == 0, "aligned large copy differs");
    wgml_buffer_destroy(a);
    wgml_buffer_destroy(b);
    free(m);
    free(got);
}

static wgml_kernel *selfcheck_kernel(const char *entry, const char *def, int nb, unsigned ro)
{
    wg_kernel_ref ref = {"selfcheck.wgsl", entry, def, nb, ro};
    wgml_kernel *k = NULL;
    CHECK_OK(wg_kernel_get(ctx, &ref, &k));
    return k;
}

/* More than 65,535 workgroups in one dimension: folded into y (and z). */
static void t_big_grid(void)
{
    wgml_kernel *k = selfcheck_kernel("mark_u32", "MARK", 1, 0);
    uint32_t n = 65535u * 64u * 3u + 77u; /* 196,606 workgroups of 64 */
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, n * 4ull, &b));
    if (!k || !b)
        return;
    CHECK_OK(wgml_buffer_fill(b, 0, n * 4ull, 0xffffffffu));
    uint32_t add = (uint32_t)t_range(1, 1000);
    uint32_t prm[4] = {n, add, 0, 0};
    wg_binding bind = wg_bind_all(b);
    CHECK_OK(wg_dispatch(ctx, k, &bind, 1, prm, sizeof prm, (n + 63) / 64, 1, 1));
    uint32_t *got = malloc(n * 4ull);
    CHECK_OK(wgml_buffer_read(b, 0, got, n * 4ull));
    int bad = 0;
    for (uint32_t i = 0; i < n; i++)
        if (got[i] != i + add && bad++ < 3)
            printf("    out[%u] = %u, want %u\n", i, got[i], i + add);
    CHECK(bad == 0, "%d wrong elements", bad);
    free(got);
    wgml_buffer_destroy(b);

    uint32_t g[3];
    wg_split_grid(65535, 65536, g);
    CHECK((uint64_t)g[0] * g[1] * g[2] >= 65536 && g[0] <= 65535 && g[2] == 1, "%u %u %u", g[0], g[1], g[2]);
    wg_split_grid(65535, 65535ull * 65535 * 3, g);
    CHECK((uint64_t)g[0] * g[1] * g[2] >= 65535ull * 65535 * 3 && g[0] <= 65535 && g[1] <= 65535 && g[2] <= 65535,
          "%u %u %u", g[0], g[1], g[2]);
    /* A 2-D grid past the limit is refused, not silently truncated. */
    wgml_kernel *k2 = selfcheck_kernel("mark_u32", "MARK", 1, 0);
    wgml_buffer *b2 = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 64, &b2));
    if (k2 && b2) {
        wg_binding bb = wg_bind_all(b2);
        wgml_status st = wg_dispatch(ctx, k2, &bb, 1, prm, sizeof prm, 70000, 2, 1);
        CHECK(st == WGML_ERR_LIMIT, "got %s", wgml_status_name(st));
    }
    wgml_buffer_destroy(b2);
}

/* 10,000 dependent dispatches with different parameters in one stream: all
 * must run, in order, with their own parameters; one wait at the end. */
static void t_many_dispatches(void)
{
    wgml_kernel *k = selfcheck_kernel("affine_u32", "AFFINE", 1, 0);
    enum { N = 10000, E = 100 };
    uint32_t host[E], want[E];
    for (int i = 0; i < E; i++)
        host[i] = want[i] = (uint32_t)t_rand();
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, sizeof host, &b));
    if (!k || !b)
        return;
    CHECK_OK(wgml_buffer_write(b, 0, host, sizeof host));
    CHECK_OK(wgml_ctx_sync(ctx));
    wgml_ctx_stats s0, s1;
    wgml_ctx_stats_get(ctx, &s0);
    wg_binding bind = wg_bind_all(b);
    for (int i = 0; i < N; i++) {
        uint32_t a = (uint32_t)t_rand() | 1u, c = (uint32_t)t_rand();
        uint32_t prm[4] = {E, a, c, 0};
        wgml_status st = wg_dispatch(ctx, k, &bind, 1, prm, sizeof prm, 2, 1, 1);
        if (st != WGML_OK) {
            CHECK_OK(st);
            break;
        }
        for (int j = 0; j < E; j++)
            want[j] = want[j] * a + c;
    }
    CHECK_OK(wgml_buffer_read(b, 0, host, sizeof host));
    wgml_ctx_stats_get(ctx, &s1);
    CHECK(memcmp(host, want, sizeof host) == 0, "results differ from the CPU");
    CHECK(s1.dispatches - s0.dispatches == N, "%llu dispatches", (unsigned long long)(s1.dispatches - s0.dispatches));
    CHECK(s1.waits - s0.waits == 1, "%llu waits for one stream", (unsigned long long)(s1.waits - s0.waits));
    CHECK(s1.submits - s0.submits <= 4, "%llu submits", (unsigned long long)(s1.submits - s0.submits));
    CHECK(s1.bind_group_misses - s0.bind_group_misses <= 1, "bind group rebuilt %llu times",
          (unsigned long long)(s1.bind_group_misses - s0.bind_group_misses));
    wgml_buffer_destroy(b);
}

static void t_kernel_cache(void)
{
    static const char *src =
        "@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n"
        "@compute @workgroup_size(1) fn main() { o[0] = 7u; }\n";
    wgml_kernel_desc d = {"cache-test", src, "main", 1, 0};
    wgml_ctx_stats s0, s1, s2;
    wgml_ctx_stats_get(ctx, &s0);
    wgml_kernel *k1 = NULL, *k2 = NULL;
    CHECK_OK(wgml_kernel_create(ctx, &d, &k1));
    wgml_ctx_stats_get(ctx, &s1);
    CHECK_OK(wgml_kernel_create(ctx, &d, &k2));
    wgml_ctx_stats_get(ctx, &s2);
    CHECK(k1 && k1 == k2, "second create returned another kernel");
    CHECK(s1.pipelines_compiled - s0.pipelines_compiled == 1, "first create compiled %llu times",
          (unsigned long long)(s1.pipelines_compiled - s0.pipelines_compiled));
    CHECK(s2.pipelines_compiled == s1.pipelines_compiled && s2.pipeline_cache_hits == s1.pipeline_cache_hits + 1,
          "second create was not a cache hit");
    /* Template kernels: the ref cache answers without re-expanding. */
    wg_kernel_ref ref = {"selfcheck.wgsl", "mark_u32", "MARK", 1, 0};
    wgml_kernel *a = NULL, *b = NULL;
    CHECK_OK(wg_kernel_get(ctx, &ref, &a));
    wgml_ctx_stats_get(ctx, &s1);
    CHECK_OK(wg_kernel_get(ctx, &ref, &b));
    wgml_ctx_stats_get(ctx, &s2);
    CHECK(a == b && s2.pipelines_compiled == s1.pipelines_compiled, "template kernel compiled twice");
    /* A custom kernel runs through the public dispatch. */
    wgml_buffer *o = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 4, &o));
    uint32_t v = 0;
    if (k1 && o) {
        CHECK_OK(wgml_dispatch(ctx, k1, &o, 1, NULL, 0, 1, 1, 1));
        CHECK_OK(wgml_buffer_read(o, 0, &v, 4));
    }
    CHECK(v == 7, "custom kernel wrote %u", v);
    wgml_buffer_destroy(o);
}

static void t_template(void)
{
    char *s = wg_template_expand(ctx, "copy.wgsl", "V4");
    CHECK(s && strstr(s, "alias T = vec4<u32>;") && !strstr(s, "fn copy_bytes") && strstr(s, "fn wg_linear"),
          "V4 expansion wrong");
    free(s);
    s = wg_template_expand(ctx, "copy.wgsl", "SRC_RW");
    CHECK(s && strstr(s, "alias T = u32;") && strstr(s, "fn copy_bytes") &&
              strstr(s, "var<storage, read_write> src"), "SRC_RW expansion wrong");
    free(s);
    s = wg_template_expand(ctx, "no-such-file.wgsl", NULL);
    CHECK(!s && strstr(wgml_last_error(), "no-such-file"), "missing file: %s", wgml_last_error());
}

static int count_files(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "find '%s' -type f 2>/dev/null | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

/* WGML_DUMP_KERNELS=dir: a kernel compiled while it is set leaves its
 * WGSL (byte for byte) and a compile.txt line naming it; one compiled
 * after it is unset leaves nothing more. */
static void t_dump_kernels(void)
{
    char dir[] = "/tmp/wgml-dump-test-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    static const char *src =
        "@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n"
        "@compute @workgroup_size(1) fn main() { o[0] = 11u; }\n";
    static const char *src2 =
        "@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n"
        "@compute @workgroup_size(1) fn main() { o[0] = 12u; }\n";
    wgml_kernel_desc d = {"dump-test", src, "main", 1, 0}, d2 = {"dump-test2", src2, "main", 1, 0};
    wgml_kernel *k = NULL;
    t_env("WGML_DUMP_KERNELS", dir);
    CHECK_OK(wgml_kernel_create(ctx, &d, &k));
    t_env("WGML_DUMP_KERNELS", NULL);
    CHECK_OK(wgml_kernel_create(ctx, &d2, &k));
    char path[512], line[256] = "", name[200] = "";
    double secs = -1;
    snprintf(path, sizeof path, "%s/compile.txt", dir);
    FILE *f = fopen(path, "r");
    int lines = 0;
    if (f) {
        while (fgets(line, sizeof line, f))
            lines += sscanf(line, "%lf %199s", &secs, name) == 2;
        fclose(f);
    }
    CHECK(lines == 1 && secs >= 0 && !strncmp(name, "dump-test-", 10), "compile.txt: %d lines, last '%s'", lines,
          line);
    snprintf(path, sizeof path, "%s/%s.wgsl", dir, name);
    char got[512] = "";
    f = fopen(path, "r");
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    if (f)
        fclose(f);
    got[n] = 0;
    CHECK(!strcmp(got, src), "%s: the WGSL differs from the source (%zu bytes)", path, n);
    remove(path);
    snprintf(path, sizeof path, "%s/compile.txt", dir);
    remove(path);
    CHECK(rmdir(dir) == 0, "%s: files left besides the two", dir);
}

/* The disk cache outlives the process: a first process fills the cache
 * folder, a second one with the same folder compiles the same kernels and
 * finds them there (it adds no entries). */
static void t_disk_cache(void)
{
    char dir[] = "/tmp/wgml-cache-test-XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "env -u MESA_SHADER_CACHE_DIR -u __GL_SHADER_DISK_CACHE_PATH WGML_CACHE_DIR=%s "
             "/proc/%d/exe --child-compile", dir, (int)getpid());
    int rc1 = system(cmd);
    int n1 = count_files(dir);
    int rc2 = system(cmd);
    int n2 = count_files(dir);
    CHECK(rc1 == 0 && rc2 == 0, "child processes failed (%d, %d)", rc1, rc2);
    CHECK(n1 > 0, "first process left no cache files in %s", dir);
    CHECK(n2 == n1, "second process added entries (%d -> %d): it missed the cache", n1, n2);
    printf("    %d cache files in %s after two processes\n", n2, dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        printf("    could not remove %s\n", dir);
}

static int child_compile(void)
{
    wgml_ctx *c = NULL;
    if (wgml_ctx_create(NULL, &c) != WGML_OK)
        return 1;
    const char *entries[][2] = {{"mark_u32", "MARK"}, {"affine_u32", "AFFINE"}, {"reduce_sum_f32", "REDUCE"}};
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        wg_kernel_ref ref = {"selfcheck.wgsl", entries[i][0], entries[i][1], i == 2 ? 2 : 1, i == 2 ? 1u : 0u};
        wgml_kernel *k;
        if (wg_kernel_get(c, &ref, &k) != WGML_OK)
            rc = 1;
    }
    wgml_ctx_destroy(c);
    return rc;
}

static void t_profile(void)
{
    wgml_ctx_options o = {0};
    o.profile = 1;
    wgml_ctx *c = NULL;
    CHECK_OK(wgml_ctx_create(&o, &c));
    if (!c)
        return;
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(c, &in));
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(c, 1 << 20, &b));
    for (int i = 0; i < 5; i++)
        CHECK_OK(wgml_buffer_fill(b, 0, 1 << 20, (uint32_t)i));
    CHECK_OK(wgml_ctx_sync(c));
    FILE *f = tmpfile();
    char text[4096] = "";
    if (f) {
        wgml_status st = wgml_profile_print(c, f);
        rewind(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        if (in.features & WGML_FEATURE_TIMESTAMPS) {
            CHECK(st == WGML_OK, "%s", wgml_last_error());
            CHECK(strstr(text, "fill:fill") && strstr(text, "total"), "profile lacks the fill kernel:\n%s", text);
        }
    }
    wgml_buffer_destroy(b);
    wgml_ctx_destroy(c);
}

static void t_info(void)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(ctx, &in));
    CHECK(in.adapter[0] && in.backend[0], "empty adapter info");
    CHECK((in.features & ~in.available) == 0, "enabled features not offered by the adapter");
    if (in.features & WGML_FEATURE_SUBGROUPS)
        CHECK(in.subgroup_size >= 1 && in.subgroup_size <= 128 && (in.subgroup_size & (in.subgroup_size - 1)) == 0,
              "subgroup size %u", in.subgroup_size);
    char buf[128];
    CHECK(strcmp(wgml_feature_names(WGML_FEATURE_F16 | WGML_FEATURE_SUBGROUPS, buf, sizeof buf), "f16 subgroups") == 0,
          "names '%s'", buf);
}

/* A destroyed buffer's memory comes back for the next buffer of its
 * rounded size, zeroed (the creation contract), while buffers of other
 * sizes and a pool too small for them are allocated afresh. */
static void t_pool(void)
{
    wgml_ctx_stats s0, s1;
    uint64_t sizes[3] = {1000, 1 << 20, 3 << 20};
    for (int i = 0; i < 3; i++) {
        wgml_buffer *a = NULL, *b = NULL, *c = NULL;
        CHECK_OK(wgml_buffer_create(ctx, sizes[i], &a));
        CHECK_OK(wgml_buffer_fill(a, 0, sizes[i], 0xdeadbeefu));
        wgml_buffer_destroy(a);
        CHECK_OK(wgml_ctx_stats_get(ctx, &s0));
        CHECK_OK(wgml_buffer_create(ctx, sizes[i] - 3, &b)); /* same 16-byte rounding */
        CHECK_OK(wgml_buffer_create(ctx, sizes[i] + 64, &c)); /* another size */
        CHECK_OK(wgml_ctx_stats_get(ctx, &s1));
        CHECK(s1.buffers_reused == s0.buffers_reused + 1, "size %llu: %llu reuses, want 1",
              (unsigned long long)sizes[i], (unsigned long long)(s1.buffers_reused - s0.buffers_reused));
        uint8_t *h = malloc(sizes[i]);
        CHECK_OK(wgml_buffer_read(b, 0, h, sizes[i] - 3));
        uint64_t nz = 0;
        for (uint64_t k = 0; k < sizes[i] - 3; k++)
            nz += h[k] != 0;
        CHECK(nz == 0, "reused buffer of %llu bytes: %llu non-zero bytes", (unsigned long long)sizes[i],
              (unsigned long long)nz);
        free(h);
        wgml_buffer_destroy(b);
        wgml_buffer_destroy(c);
    }
    /* WGML_POOL_MB=2: a 3 MiB buffer is released, not pooled; 0: no pool */
    const char *caps[2] = {"2", "0"};
    for (int k = 0; k < 2; k++) {
        t_env("WGML_POOL_MB", caps[k]);
        wgml_ctx *c2 = NULL;
        CHECK_OK(wgml_ctx_create(NULL, &c2));
        t_env("WGML_POOL_MB", NULL);
        if (!c2)
            return;
        for (int i = 1; i < 3; i++) {
            wgml_buffer *a = NULL;
            CHECK_OK(wgml_buffer_create(c2, sizes[i], &a));
            wgml_buffer_destroy(a);
            CHECK_OK(wgml_ctx_stats_get(c2, &s0));
            CHECK_OK(wgml_buffer_create(c2, sizes[i], &a));
            CHECK_OK(wgml_ctx_stats_get(c2, &s1));
            bool want = k == 0 && i == 1;
            CHECK((s1.buffers_reused - s0.buffers_reused) == (want ? 1u : 0u), "cap %s MiB, %llu bytes: reuse %llu",
                  caps[k], (unsigned long long)sizes[i], (unsigned long long)(s1.buffers_reused - s0.buffers_reused));
            wgml_buffer_destroy(a);
        }
        wgml_ctx_destroy(c2);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child-compile") == 0)
        return child_compile();
    if (t_open_ctx(&ctx))
        return 1;
    static const t_case cases[] = {
        {"info", t_info},
        {"buffer_sizes_0_to_9", t_sizes},
        {"buffer_roundtrip_odd_offsets", t_roundtrip_odd},
        {"fill_odd_offsets", t_fill},
        {"copy_variants_and_overlap", t_copy},
        {"larger_than_one_binding", t_larger_than_binding},
        {"grid_over_65535_workgroups", t_big_grid},
        {"ten_thousand_dispatches_one_stream", t_many_dispatches},
        {"kernel_cache_hit", t_kernel_cache},
        {"template_expansion", t_template},
        {"disk_cache_survives_restart", t_disk_cache},
        {"dump_kernels", t_dump_kernels},
        {"profile_summary", t_profile},
        {"buffer_pool", t_pool},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(ctx);
    return rc;
}
