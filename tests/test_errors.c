/* Error paths: every bad input returns a status and a message; nothing
 * aborts; a dead device makes later calls fail cleanly. */
#include "gpu/internal.h"
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
    char big[600] = {0}; /* past WG_PARAMS_MAX (512) */
    CHECK(wgml_dispatch(ctx, k, &b, 1, big, sizeof big, 1, 1, 1) == WGML_ERR_INVALID_ARG, "600 param bytes accepted");
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
    t_env("WGML_DISABLE", "f16,immediates");
    CHECK_OK(wgml_ctx_create(NULL, &c));
    t_env("WGML_DISABLE", NULL);
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

/* Shapes whose element count or byte size would wrap 64 bits are refused
 * (u8 [694428065361, 26563938] wrapped to 2 elements, got 2 bytes, and a
 * fill of a slice of it aborted the process in wgpuQueueSubmit). */
static void t_shape_overflow(void)
{
    static const struct { int nd; int64_t s[4]; } bad[] = {
        {2, {694428065361ll, 26563938ll}},
        {2, {(int64_t)1 << 40, (int64_t)1 << 40}},
        {3, {(int64_t)1 << 21, (int64_t)1 << 21, 2}},
        {4, {65536, 65536, 65536, 65536}},
        {1, {((int64_t)1 << 40) + 1}},
        {2, {-1, 4}},
        {1, {INT64_MAX}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wgml_tensor *t = (wgml_tensor *)1;
        wgml_status st = wgml_tensor_new(ctx, WGML_U8, bad[i].nd, bad[i].s, &t);
        CHECK(st == WGML_ERR_SHAPE && t == NULL, "shape %zu: got %s, tensor %p", i, wgml_status_name(st), (void *)t);
    }
    /* The same through views: broadcast and reshape to wrapping shapes. */
    int64_t one = 1, four = 4;
    wgml_tensor *s = NULL, *v = NULL;
    CHECK_OK(wgml_tensor_new(ctx, WGML_U8, 1, &one, &s));
    int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
    wgml_status st = wgml_view_broadcast(s, 3, huge, &v);
    CHECK(st == WGML_ERR_SHAPE, "broadcast to 2^120 elements gave %s", wgml_status_name(st));
    int64_t neg[2] = {-5, 1};
    st = wgml_view_broadcast(s, 2, neg, &v);
    CHECK(st == WGML_ERR_SHAPE, "broadcast to a negative dim gave %s", wgml_status_name(st));
    int64_t wrap[2] = {694428065361ll, 26563938ll};
    st = wgml_view_reshape(s, 2, wrap, &v);
    CHECK(st == WGML_ERR_SHAPE, "reshape to a wrapping shape gave %s", wgml_status_name(st));
    wgml_tensor_free(s);
    /* A step past any int64 product: one element, no overflow. */
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 1, &four, &s));
    CHECK_OK(wgml_view_slice(s, 0, 1, 4, INT64_MAX, &v));
    CHECK(v && wgml_tensor_dim(v, 0) == 1, "step INT64_MAX slice has %lld elements", (long long)wgml_tensor_dim(v, 0));
    if (v)
        CHECK_OK(wgml_fill(v, 2.0));
    wgml_tensor_free(v);
    wgml_tensor_free(s);
    /* An empty tensor with huge other dims is fine (0 elements). */
    int64_t empty[3] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
    CHECK_OK(wgml_tensor_new(ctx, WGML_U8, 3, empty, &s));
    wgml_tensor_free(s);
    CHECK_OK(wgml_ctx_sync(ctx));
}

/* NULL shape arrays are a NULL argument, not a bad ndim. */
static void t_null_shape(void)
{
    wgml_tensor *t = NULL, *v = NULL;
    wgml_status st = wgml_tensor_new(ctx, WGML_F32, 2, NULL, &t);
    CHECK(st == WGML_ERR_INVALID_ARG, "tensor_new(NULL shape) gave %s", wgml_status_name(st));
    CHECK(strstr(wgml_last_error(), "NULL") != NULL, "message: %s", wgml_last_error());
    int64_t four = 4;
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 1, &four, &t));
    st = wgml_view_reshape(t, 2, NULL, &v);
    CHECK(st == WGML_ERR_INVALID_ARG, "view_reshape(NULL shape) gave %s", wgml_status_name(st));
    CHECK(strstr(wgml_last_error(), "NULL") != NULL, "message: %s", wgml_last_error());
    st = wgml_tensor_new(ctx, WGML_F32, 5, &four, &v);
    CHECK(st == WGML_ERR_SHAPE, "ndim 5 gave %s", wgml_status_name(st));
    CHECK_OK(wgml_tensor_new(ctx, WGML_F32, 0, NULL, &v)); /* a scalar needs no shape */
    wgml_tensor_free(v);
    wgml_tensor_free(t);
}

/* A binding outside its buffer or misaligned is refused before WebGPU sees
 * it (wgpu-native would abort the process at submit), and the context goes
 * on working. */
static void t_binding_out_of_range(void)
{
    wgml_kernel_desc d = {"oob", "@group(0) @binding(1) var<storage, read_write> o: array<u32>;\n"
                                 "@compute @workgroup_size(1) fn main() { o[0] = 7u; }\n", "main", 1, 0};
    wgml_kernel *k = NULL;
    wgml_buffer *b = NULL;
    CHECK_OK(wgml_kernel_create(ctx, &d, &k));
    CHECK_OK(wgml_buffer_create(ctx, 16, &b));
    if (!k || !b)
        return;
    wg_binding past = {b, 0, 4096}, misaligned = {b, 4, 4}, wrapped = {b, 256, 16};
    const wg_binding *cases[] = {&past, &misaligned, &wrapped};
    for (int i = 0; i < 3; i++) {
        wgml_status st = wg_dispatch(ctx, k, cases[i], 1, NULL, 0, 1, 1, 1);
        CHECK(st != WGML_OK, "binding case %d accepted", i);
        CHECK(strstr(wgml_last_error(), "outside") != NULL, "case %d message: %s", i, wgml_last_error());
    }
    CHECK_OK(wgml_ctx_sync(ctx));
    CHECK_OK(wgml_dispatch(ctx, k, &b, 1, NULL, 0, 1, 1, 1));
    uint32_t x = 0;
    CHECK_OK(wgml_buffer_read(b, 0, &x, 4));
    CHECK(x == 7, "the context stopped working: read %u", x);
    wgml_buffer_destroy(b);
}

int main(int argc, char **argv)
{
    if (t_open_ctx(&ctx))
        return 1;
    static const t_case cases[] = {
        {"invalid_wgsl_is_shader_error", t_invalid_wgsl},
        {"allocation_over_limit", t_too_large},
        {"bad_arguments", t_bad_args},
        {"shape_overflow_refused", t_shape_overflow},
        {"null_shape_is_invalid_arg", t_null_shape},
        {"binding_out_of_range_refused", t_binding_out_of_range},
        {"async_validation_error_reported", t_async_error},
        {"adapter_choice", t_adapter_choice},
        {"disable_features", t_disable_features},
        {"calls_after_device_destroyed", t_device_lost},
    };
    int rc = t_run(cases, sizeof cases / sizeof *cases, argc > 1 ? argv[1] : NULL);
    wgml_ctx_destroy(ctx);
    return rc;
}
