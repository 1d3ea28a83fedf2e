/* Error paths: every bad input returns a status and a message; nothing
 * aborts; a dead device makes later calls fail cleanly. */
#include "gpu/gpu.h"
#include "harness.h"

#include <stdlib.h>

static wgml_ctx *ctx;

static void t_invalid_wgsl(void)
{
    static const char *bad = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; oops }\n";
    wgml_kernel_desc d = {"broken-kernel", bad, "main", 0, 0};
    wgml_kernel *k = NULL;
    wgml_status st = wgml_kernel_create(ctx, &d, &k);
    CHECK(st == WGML_ERR_SHADER, "got %s", wgml_status_name(st));
    CHECK(k == NULL, "a kernel was returned");
    CHECK(strstr(wgml_last_error(), "broken-kernel") != NULL, "message lacks the kernel name: %s", wgml_last_error());
    CHECK(strstr(wgml_last_error(), "error") != NULL || strstr(wgml_last_error(), "Error") != NULL,
          "message lacks the compiler's text: %s", wgml_last_error());
    /* Valid WGSL but a missing entry point is a pipeline error. */
    static const char *ok = "@compute @workgroup_size(1) fn main() {}\n";
    wgml_kernel_desc d2 = {"no-entry", ok, "nope", 0, 0};
    st = wgml_kernel_create(ctx, &d2, &k);
    CHECK(st == WGML_ERR_SHADER, "missing entry point gave %s", wgml_status_name(st));
    /* The context still works afterwards. */
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 16, &b));
    wgml_buffer_destroy(b);
}

static void t_too_large(void)
{
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(ctx, &in));
    wgml_buffer *b = NULL;
    wgml_status st = wgml_buffer_create(ctx, in.max_buffer_size + 1, &b);
    CHECK(st == WGML_ERR_LIMIT, "got %s", wgml_status_name(st));
    CHECK(b == NULL, "buffer returned");
    CHECK(strstr(wgml_last_error(), "maxBufferSize") != NULL, "message: %s", wgml_last_error());
    st = wgml_buffer_create(ctx, UINT64_MAX, &b);
    CHECK(st == WGML_ERR_LIMIT, "UINT64_MAX gave %s", wgml_status_name(st));
}

static void t_bad_args(void)
{
    wgml_buffer *b = NULL;
    uint8_t tmp[64] = {0};
    CHECK(wgml_buffer_create(ctx, 16, NULL) == WGML_ERR_INVALID_ARG, "NULL out accepted");
    CHECK(wgml_buffer_create(NULL, 16, &b) == WGML_ERR_INVALID_ARG, "NULL ctx accepted");
    CHECK_OK(wgml_buffer_create(ctx, 32, &b));
    CHECK(wgml_buffer_write(b, 30, tmp, 3) == WGML_ERR_INVALID_ARG, "write past the end accepted");
    CHECK(strstr(wgml_last_error(), "outside") != NULL, "message: %s", wgml_last_error());
    CHECK(wgml_buffer_read(b, UINT64_MAX, tmp, 2) == WGML_ERR_INVALID_ARG, "offset overflow accepted");
    CHECK(wgml_buffer_read(b, 0, NULL, 4) == WGML_ERR_INVALID_ARG, "NULL dst accepted");
    CHECK(wgml_buffer_write(b, 0, NULL, 4) == WGML_ERR_INVALID_ARG, "NULL src accepted");
    CHECK(wgml_buffer_fill(b, 16, 17, 0) == WGML_ERR_INVALID_ARG, "fill past the end accepted");
    CHECK(wgml_buffer_copy(b, 0, b, 20, 13) == WGML_ERR_INVALID_ARG, "copy past the end accepted");
    CHECK(wgml_buffer_write(NULL, 0, tmp, 1) == WGML_ERR_INVALID_ARG, "NULL buffer accepted");
    wgml_kernel_desc d = {"k", NULL, "main", 0, 0};
    wgml_kernel *k = NULL;
    CHECK(wgml_kernel_create(ctx, &d, &k) == WGML_ERR_INVALID_ARG, "NULL wgsl accepted");
    d.wgsl = "@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n"
             "@compute @workgroup_size(1) fn main() { o[0] = 1u; }\n";
    d.n_buffers = 9;
    CHECK(wgml_kernel_create(ctx, &d, &k) == WGML_ERR_INVALID_ARG, "9 buffers accepted");
    d.n_buffers = 1;
    CHECK_OK(wgml_kernel_create(ctx, &d, &k));
    CHECK(wgml_dispatch(ctx, k, &b, 2, NULL, 0, 1, 1, 1) == WGML_ERR_INVALID_ARG, "wrong buffer count accepted");
    char big[300] = {0};
    CHECK(wgml_dispatch(ctx, k, &b, 1, big, sizeof big, 1, 1, 1) == WGML_ERR_INVALID_ARG, "300 param bytes accepted");
    CHECK(wgml_dispatch(ctx, k, &b, 1, NULL, 0, 0, 1, 1) == WGML_OK, "empty grid refused");
    /* One buffer bound read-only and writable: refused up front (wgpu-native
     * would abort the process at submit). */
    wgml_kernel_desc d2 = {"alias", "@group(0) @binding(1) var<storage, read> x: array<u32>;\n"
                                    "@group(0) @binding(2) var<storage, read_write> y: array<u32>;\n"
                                    "@compute @workgroup_size(1) fn main() { y[0] = x[1]; }\n", "main", 2, 1};
    wgml_kernel *ka = NULL;
    CHECK_OK(wgml_kernel_create(ctx, &d2, &ka));
    wgml_buffer *two[2] = {b, b};
    if (ka)
        CHECK(wgml_dispatch(ctx, ka, two, 2, NULL, 0, 1, 1, 1) == WGML_ERR_INVALID_ARG, "aliased read-only/writable accepted");
    CHECK_OK(wgml_ctx_sync(ctx));
    CHECK(strcmp(wgml_status_name(WGML_ERR_SHADER), "WGML_ERR_SHADER") == 0, "status name");
    CHECK(strcmp(wgml_status_name((wgml_status)999), "WGML_ERR_UNKNOWN") == 0, "unknown status name");
    wgml_buffer_destroy(b);
    wgml_buffer_destroy(NULL);
    wgml_ctx_destroy(NULL);
}

/* A validation error raised inside the queue (not by a wgml check) is
 * captured by the callback and returned by the next call, once. */
static void t_async_error(void)
{
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(ctx, 64, &b));
    if (!b)
        return;
    uint8_t x[3] = {1, 2, 3};
    wgpuQueueWriteBuffer(ctx->queue, b->buf, 1, x, 3); /* unaligned: invalid */
    wgml_status st = wgml_ctx_sync(ctx);
    CHECK(st == WGML_ERR_DEVICE, "got %s", wgml_status_name(st));
    CHECK(strlen(wgml_last_error()) > 10, "message: %s", wgml_last_error());
    CHECK_OK(wgml_ctx_sync(ctx)); /* reported once, then the context goes on */
    wgml_buffer_destroy(b);
}

static void t_adapter_choice(void)
{
    wgml_ctx_options o = {0};
    o.adapter = "no-such-adapter-xyz";
    wgml_ctx *c = NULL;
    wgml_status st = wgml_ctx_create(&o, &c);
    CHECK(st == WGML_ERR_NO_ADAPTER && c == NULL, "got %s", wgml_status_name(st));
    CHECK(strstr(wgml_last_error(), "[0]") != NULL, "message does not list adapters: %s", wgml_last_error());
    o.adapter = "99";
    CHECK(wgml_ctx_create(&o, &c) == WGML_ERR_NO_ADAPTER, "index 99 accepted");
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(ctx, &in));
    o.adapter = "0";
    CHECK_OK(wgml_ctx_create(&o, &c));
    wgml_ctx_destroy(c);
    c = NULL;
    /* By name substring, case-insensitive. */
    char sub[8] = {0};
    for (int i = 0; i < 4 && in.adapter[i]; i++)
        sub[i] = (char)(in.adapter[i] >= 'a' && in.adapter[i] <= 'z' ? in.adapter[i] - 32 : in.adapter[i]);
    o.adapter = sub;
    CHECK_OK(wgml_ctx_create(&o, &c));
    wgml_device_info in2;
    if (c) {
        CHECK_OK(wgml_device_info_get(c, &in2));
        CHECK(strcmp(in.adapter, in2.adapter) == 0, "'%s' picked '%s'", sub, in2.adapter);
    }
    wgml_ctx_destroy(c);
    size_t n = 0;
    CHECK_OK(wgml_adapters_list(NULL, 0, &n));
    CHECK(n >= 1, "no adapters listed");
}

static void t_disable_features(void)
{
    wgml_ctx_options o = {0};
    o.disable_features = WGML_FEATURE_F16 | WGML_FEATURE_SUBGROUPS | WGML_FEATURE_TIMESTAMPS;
    wgml_ctx *c = NULL;
    CHECK_OK(wgml_ctx_create(&o, &c));
    if (!c)
        return;
    wgml_device_info in;
    CHECK_OK(wgml_device_info_get(c, &in));
    CHECK((in.features & (WGML_FEATURE_F16 | WGML_FEATURE_SUBGROUPS | WGML_FEATURE_TIMESTAMPS |
                          WGML_FEATURE_TIMESTAMPS_IN_PASSES)) == 0, "features 0x%x still on", in.features);
    CHECK(in.subgroup_size == 0, "subgroup size %u without subgroups", in.subgroup_size);
    wgml_ctx_destroy(c);
    /* Same through the environment. */
    setenv("WGML_DISABLE", "f16,immediates", 1);
    CHECK_OK(wgml_ctx_create(NULL, &c));
    unsetenv("WGML_DISABLE");
    if (!c)
        return;
    CHECK_OK(wgml_device_info_get(c, &in));
    CHECK((in.features & (WGML_FEATURE_F16 | WGML_FEATURE_IMMEDIATES)) == 0, "env did not disable: 0x%x", in.features);
    wgml_ctx_destroy(c);
}

/* Destroying the device under a live context: every later call returns
 * WGML_ERR_DEVICE_LOST, nothing crashes, and teardown still frees all. */
static void t_device_lost(void)
{
    wgml_ctx *c = NULL;
    CHECK_OK(wgml_ctx_create(NULL, &c));
    if (!c)
        return;
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_buffer_create(c, 256, &b));
    wgml_ctx_destroy_device(c);
    wgml_status st = wgml_ctx_sync(c);
    CHECK(st == WGML_ERR_DEVICE_LOST, "sync after destroy gave %s", wgml_status_name(st));
    CHECK(strstr(wgml_last_error(), "lost") || strstr(wgml_last_error(), "destroy"), "message: %s",
          wgml_last_error());
    wgml_buffer *b2 = NULL;
    st = wgml_buffer_create(c, 16, &b2);
    CHECK(st == WGML_ERR_DEVICE_LOST && !b2, "create after destroy gave %s", wgml_status_name(st));
    uint8_t x[8] = {0};
    CHECK(wgml_buffer_write(b, 0, x, 8) == WGML_ERR_DEVICE_LOST, "write after destroy");
    CHECK(wgml_buffer_read(b, 0, x, 8) == WGML_ERR_DEVICE_LOST, "read after destroy");
    CHECK(wgml_buffer_fill(b, 0, 8, 1) == WGML_ERR_DEVICE_LOST, "fill after destroy");
    CHECK(wgml_buffer_copy(b, 0, b, 8, 8) == WGML_ERR_DEVICE_LOST, "copy after destroy");
    wgml_kernel_desc d = {"k", "@compute @workgroup_size(1) fn main() {}", "main", 0, 0};
    wgml_kernel *k = NULL;
    CHECK(wgml_kernel_create(c, &d, &k) == WGML_ERR_DEVICE_LOST, "kernel create after destroy");
    wgml_device_info in;
    CHECK(wgml_device_info_get(c, &in) == WGML_ERR_DEVICE_LOST, "info after destroy");
    wgml_buffer_destroy(b);
    wgml_ctx_destroy(c);
}

int main(int argc, char **argv)
{
    t_seed();
    wgml_status st = wgml_ctx_create(NULL, &ctx);
    if (st != WGML_OK) {
        printf("cannot create a context: %s: %s\n0 passed, 1 failed\n", wgml_status_name(st), wgml_last_error());
        return 1;
    }
    static const t_case cases[] = {
        {"invalid_wgsl_is_shader_error", t_invalid_wgsl},
        {"allocation_over_limit", t_too_large},
        {"bad_arguments", t_bad_args},
        {"async_validation_error_reported", t_async_error},
        {"adapter_choice", t_adapter_choice},
        {"disable_features", t_disable_features},
        {"calls_after_device_destroyed", t_device_lost},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(ctx);
    return rc;
}
