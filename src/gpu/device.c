/*
 * Instance, adapter choice, device creation and the callbacks that turn
 * asynchronous GPU failures into statuses returned by the next call.  The
 * context's lifecycle (what is built on the device) is context.c's.
 */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ helpers */

static void sv_copy(char *dst, size_t n, WGPUStringView s)
{
    size_t len = s.data ? (s.length == WGPU_STRLEN ? strlen(s.data) : s.length) : 0;
    if (len >= n)
        len = n - 1;
    if (len)
        memcpy(dst, s.data, len);
    dst[len] = 0;
}

static const char *backend_name(WGPUBackendType b)
{
    switch (b) {
    case WGPUBackendType_Vulkan: return "Vulkan";
    case WGPUBackendType_Metal: return "Metal";
    case WGPUBackendType_D3D12: return "D3D12";
    case WGPUBackendType_D3D11: return "D3D11";
    case WGPUBackendType_OpenGL: return "OpenGL";
    case WGPUBackendType_OpenGLES: return "OpenGLES";
    case WGPUBackendType_WebGPU: return "WebGPU";
    case WGPUBackendType_Null: return "Null";
    default: return "unknown";
    }
}

static const char *type_name(WGPUAdapterType t)
{
    switch (t) {
    case WGPUAdapterType_DiscreteGPU: return "discrete";
    case WGPUAdapterType_IntegratedGPU: return "integrated";
    case WGPUAdapterType_CPU: return "cpu";
    default: return "unknown";
    }
}

/* Lower is better: device type first, then a backend built for compute. */
static int adapter_rank(const WGPUAdapterInfo *ai)
{
    int t = ai->adapterType == WGPUAdapterType_DiscreteGPU ? 0
          : ai->adapterType == WGPUAdapterType_IntegratedGPU ? 1
          : ai->adapterType == WGPUAdapterType_CPU ? 2 : 3;
    int b = ai->backendType == WGPUBackendType_Vulkan ? 0
          : ai->backendType == WGPUBackendType_Metal ? 0
          : ai->backendType == WGPUBackendType_D3D12 ? 1 : 2;
    return t * 4 + b;
}

static bool icontains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return n == 0;
}

double wg_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t wg_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* CPU adapters block in the poll instead of spinning, as wg_stream_wait
 * does: lavapipe runs the GPU work, and compiles a new kernel at its first
 * dispatch, on its own threads, which a spinning core starves (on a
 * loaded 2-core machine test_op_attention's first readback after a new
 * decode kernel took 14.9 s spinning, 6.3 s after a blocking wait). */
bool wg_wait_flag(wgml_ctx *ctx, volatile int *flag, double timeout_s)
{
    double t0 = wg_now_s();
    bool block = ctx->device && wg_is_cpu(ctx);
    while (!*flag) {
        if (ctx->instance)
            wgpuInstanceProcessEvents(ctx->instance);
        if (*flag)
            break;
        if (ctx->device)
            wg_native_poll(ctx->device, block);
        if (wg_now_s() - t0 > timeout_s)
            return false;
    }
    return true;
}

bool wg_has(const wgml_ctx *ctx, unsigned f) { return (ctx->info.features & f) != 0; }

bool wg_is_cpu(const wgml_ctx *ctx) { return strcmp(ctx->info.device_type, "cpu") == 0; }

uint64_t wg_max_storage_binding(const wgml_ctx *ctx) { return ctx->limits.maxStorageBufferBindingSize; }

wgml_status wg_check(wgml_ctx *ctx)
{
    if (!ctx)
        return wg_fail(WGML_ERR_INVALID_ARG, "context is NULL");
    if (ctx->lost)
        return wg_fail(WGML_ERR_DEVICE_LOST, "device lost: %s", ctx->async_msg);
    if (ctx->async_status != WGML_OK) {
        wgml_status s = ctx->async_status;
        ctx->async_status = WGML_OK;
        return wg_fail(s, "GPU reported an error: %s", ctx->async_msg);
    }
    return WGML_OK;
}

/* ------------------------------------------------------------ callbacks */

static void on_lost(WGPUDevice const *dev, WGPUDeviceLostReason reason, WGPUStringView msg, void *u1, void *u2)
{
    (void)dev; (void)u2;
    wgml_ctx *ctx = u1;
    if (!ctx || ctx->destroying)
        return;
    ctx->lost = true;
    char m[sizeof ctx->async_msg - 64];
    sv_copy(m, sizeof m, msg);
    snprintf(ctx->async_msg, sizeof ctx->async_msg, "%s (%s)",
             m[0] ? m : "no message",
             reason == WGPUDeviceLostReason_Destroyed ? "device destroyed" : "device lost");
}

/* wgpu-native does not call the device-lost callback when the device is
 * destroyed; later calls fail validation with "Parent device is lost".  Treat
 * that text as loss too, so every path ends in WGML_ERR_DEVICE_LOST. */
static void note_if_lost(wgml_ctx *ctx, const char *msg)
{
    if (!ctx->lost && strstr(msg, "device is lost")) {
        ctx->lost = true;
        if (msg != ctx->async_msg)
            snprintf(ctx->async_msg, sizeof ctx->async_msg, "%s", msg);
    }
}

static void on_error(WGPUDevice const *dev, WGPUErrorType type, WGPUStringView msg, void *u1, void *u2)
{
    (void)dev; (void)u2;
    wgml_ctx *ctx = u1;
    if (!ctx || ctx->async_status != WGML_OK || ctx->lost)
        return; /* keep the first error: later ones are usually fallout */
    ctx->async_status = type == WGPUErrorType_OutOfMemory ? WGML_ERR_OOM : WGML_ERR_DEVICE;
    sv_copy(ctx->async_msg, sizeof ctx->async_msg, msg);
    note_if_lost(ctx, ctx->async_msg);
}

typedef struct scope_result {
    volatile int done;
    WGPUErrorType type;
    char msg[1024];
} scope_result;

static void on_pop(WGPUPopErrorScopeStatus st, WGPUErrorType type, WGPUStringView msg, void *u1, void *u2)
{
    (void)u2;
    scope_result *r = u1;
    r->type = st == WGPUPopErrorScopeStatus_Success ? type : WGPUErrorType_NoError;
    sv_copy(r->msg, sizeof r->msg, msg);
    r->done = 1;
}

void wg_scope_push(wgml_ctx *ctx)
{
    wgpuDevicePushErrorScope(ctx->device, WGPUErrorFilter_Validation);
    wgpuDevicePushErrorScope(ctx->device, WGPUErrorFilter_OutOfMemory);
}

wgml_status wg_scope_pop(wgml_ctx *ctx, wgml_status as, const char *what)
{
    scope_result r[2];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 2; i++) {
        WGPUPopErrorScopeCallbackInfo ci = {0};
        ci.mode = WGPUCallbackMode_AllowProcessEvents;
        ci.callback = on_pop;
        ci.userdata1 = &r[i];
        wgpuDevicePopErrorScope(ctx->device, ci);
        if (!wg_wait_flag(ctx, &r[i].done, 30.0))
            return wg_fail(WGML_ERR_TIMEOUT, "%s: no answer from the error scope in 30 s", what);
    }
    note_if_lost(ctx, r[1].msg);
    if (ctx->lost)
        return wg_check(ctx);
    if (r[0].type == WGPUErrorType_OutOfMemory)
        return wg_fail(WGML_ERR_OOM, "%s: out of device memory: %s", what, r[0].msg);
    if (r[1].type != WGPUErrorType_NoError)
        return wg_fail(as, "%s: %s", what, r[1].msg);
    return WGML_OK;
}

/* ------------------------------------------------------------ adapters */

typedef struct adapter_set {
    WGPUAdapter a[32];
    WGPUAdapterInfo info[32];
    size_t n;
} adapter_set;

static void adapters_get(WGPUInstance inst, adapter_set *s)
{
    s->n = wg_native_enumerate_adapters(inst, s->a, 32);
    if (s->n > 32)
        s->n = 32;
    for (size_t i = 0; i < s->n; i++) {
        memset(&s->info[i], 0, sizeof s->info[i]);
        wgpuAdapterGetInfo(s->a[i], &s->info[i]);
    }
}

/* Frees all but entry `keep` (pass s->n to free all): the caller owns the
 * kept adapter and its info. */
static void adapters_free(adapter_set *s, size_t keep)
{
    for (size_t i = 0; i < s->n; i++) {
        if (i == keep)
            continue;
        wgpuAdapterInfoFreeMembers(s->info[i]);
        wgpuAdapterRelease(s->a[i]);
    }
    s->n = 0;
}

static void adapter_line(const WGPUAdapterInfo *ai, char *buf, size_t n)
{
    char name[256];
    sv_copy(name, sizeof name, ai->device);
    snprintf(buf, n, "%s (%s, %s)", name, backend_name(ai->backendType), type_name(ai->adapterType));
}

static wgml_status adapter_choose(adapter_set *s, const char *want, size_t *out)
{
    if (s->n == 0)
        return wg_fail(WGML_ERR_NO_ADAPTER,
                       "no WebGPU adapter found: is a Vulkan driver installed? (on a CPU-only "
                       "machine: apt-get install mesa-vulkan-drivers, or run scripts/setup.sh)");
    if (want && *want) {
        char *end;
        long idx = strtol(want, &end, 10);
        for (size_t i = 0; i < s->n; i++) {
            char line[400];
            adapter_line(&s->info[i], line, sizeof line);
            if ((*end == 0 && idx >= 0 && (size_t)idx == i) || (*end != 0 && icontains(line, want))) {
                *out = i;
                return WGML_OK;
            }
        }
        char list[2048] = "";
        size_t used = 0;
        for (size_t i = 0; i < s->n && used < sizeof list; i++) {
            char line[400];
            adapter_line(&s->info[i], line, sizeof line);
            int w = snprintf(list + used, sizeof list - used, "\n  [%zu] %s", i, line);
            if (w > 0)
                used += (size_t)w;
        }
        return wg_fail(WGML_ERR_NO_ADAPTER, "adapter '%s' matches none of:%s", want, list);
    }
    size_t best = 0;
    for (size_t i = 1; i < s->n; i++)
        if (adapter_rank(&s->info[i]) < adapter_rank(&s->info[best]))
            best = i;
    *out = best;
    return WGML_OK;
}

wgml_status wgml_adapters_list(wgml_adapter_desc *out, size_t cap, size_t *count)
{
    if (!count)
        return wg_fail(WGML_ERR_INVALID_ARG, "count is NULL");
    WGPUInstance inst = wgpuCreateInstance(NULL);
    if (!inst)
        return wg_fail(WGML_ERR_NO_ADAPTER, "could not create a WebGPU instance");
    adapter_set s;
    adapters_get(inst, &s);
    for (size_t i = 0; i < s.n && i < cap && out; i++) {
        sv_copy(out[i].name, sizeof out[i].name, s.info[i].device);
        snprintf(out[i].backend, sizeof out[i].backend, "%s", backend_name(s.info[i].backendType));
        snprintf(out[i].device_type, sizeof out[i].device_type, "%s", type_name(s.info[i].adapterType));
    }
    *count = s.n;
    adapters_free(&s, s.n);
    wgpuInstanceRelease(inst);
    return WGML_OK;
}

const char *wgml_feature_names(unsigned f, char *buf, size_t n)
{
    static const char *names[] = {"f16", "subgroups", "timestamps", "timestamps-in-passes",
                                  "immediates", "pipeline-cache"};
    size_t used = 0;
    if (n)
        buf[0] = 0;
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        if (!(f & (1u << i)) || used >= n)
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? " " : "", names[i]);
        if (w > 0)
            used += (size_t)w;
    }
    return buf;
}

static unsigned parse_disable(const char *s)
{
    unsigned f = 0;
    if (!s)
        return 0;
    if (icontains(s, "f16")) f |= WGML_FEATURE_F16;
    if (icontains(s, "subgroup")) f |= WGML_FEATURE_SUBGROUPS;
    if (icontains(s, "timestamp")) f |= WGML_FEATURE_TIMESTAMPS | WGML_FEATURE_TIMESTAMPS_IN_PASSES;
    if (icontains(s, "immediate")) f |= WGML_FEATURE_IMMEDIATES;
    if (icontains(s, "pipeline-cache")) f |= WGML_FEATURE_PIPELINE_CACHE;
    return f;
}

/* ------------------------------------------------------------ device */

typedef struct dev_req {
    volatile int done;
    WGPUDevice dev;
    char msg[512];
} dev_req;

static void on_device(WGPURequestDeviceStatus st, WGPUDevice dev, WGPUStringView msg, void *u1, void *u2)
{
    (void)u2;
    dev_req *r = u1;
    r->dev = st == WGPURequestDeviceStatus_Success ? dev : NULL;
    sv_copy(r->msg, sizeof r->msg, msg);
    r->done = 1;
}

static void fill_info(wgml_ctx *ctx, const WGPUAdapterInfo *ai, unsigned available)
{
    wgml_device_info *in = &ctx->info;
    sv_copy(in->adapter, sizeof in->adapter, ai->device);
    sv_copy(in->vendor, sizeof in->vendor, ai->vendor);
    sv_copy(in->architecture, sizeof in->architecture, ai->architecture);
    sv_copy(in->driver, sizeof in->driver, ai->description);
    snprintf(in->backend, sizeof in->backend, "%s", backend_name(ai->backendType));
    snprintf(in->device_type, sizeof in->device_type, "%s", type_name(ai->adapterType));
    in->vendor_id = ai->vendorID;
    in->device_id = ai->deviceID;
    in->available = available;
    const WGPULimits *l = &ctx->limits;
    in->max_buffer_size = l->maxBufferSize;
    in->max_storage_binding = l->maxStorageBufferBindingSize;
    in->max_workgroup_storage = l->maxComputeWorkgroupStorageSize;
    in->max_invocations_per_workgroup = l->maxComputeInvocationsPerWorkgroup;
    in->max_workgroups_per_dim = l->maxComputeWorkgroupsPerDimension;
    in->min_storage_offset_align = l->minStorageBufferOffsetAlignment;
    in->min_uniform_offset_align = l->minUniformBufferOffsetAlignment;
    in->implementation_version = wg_native_version();
}

static wgml_status open_device(wgml_ctx *ctx, const wgml_ctx_options *o)
{
    const char *want = o && o->adapter ? o->adapter : getenv("WGML_ADAPTER");
    adapter_set s;
    adapters_get(ctx->instance, &s);
    size_t pick = 0;
    wgml_status st = adapter_choose(&s, want, &pick);
    if (st != WGML_OK) {
        adapters_free(&s, s.n);
        return st;
    }
    ctx->adapter = s.a[pick];
    WGPUAdapterInfo ai = s.info[pick];

    /* Ask only for what wgml uses: requesting every adapter feature fails
     * (experimental ones need an opt-in). */
    unsigned disable = (o ? o->disable_features : 0) | parse_disable(getenv("WGML_DISABLE"));
    WGPUFeatureName req[8];
    size_t nreq = 0;
    unsigned available = 0, enabled = 0;
    for (unsigned bit = 1; bit <= WGML_FEATURE_PIPELINE_CACHE; bit <<= 1) {
        WGPUFeatureName id = wg_native_feature_id(bit);
        if (id == 0 || !wgpuAdapterHasFeature(ctx->adapter, id))
            continue;
        available |= bit;
        if (disable & bit)
            continue;
        if (bit == WGML_FEATURE_TIMESTAMPS_IN_PASSES && !(enabled & WGML_FEATURE_TIMESTAMPS))
            continue;
        enabled |= bit;
        req[nreq++] = id;
    }

    WGPULimits lim = WGPU_LIMITS_INIT;
    if (wgpuAdapterGetLimits(ctx->adapter, &lim) != WGPUStatus_Success) {
        adapters_free(&s, pick);
        wgpuAdapterInfoFreeMembers(ai);
        return wg_fail(WGML_ERR_DEVICE, "could not read the adapter's limits");
    }
    lim.nextInChain = NULL;
    if (!(enabled & WGML_FEATURE_IMMEDIATES))
        lim.maxImmediateSize = 0;

    WGPUDeviceDescriptor dd = WGPU_DEVICE_DESCRIPTOR_INIT;
    dd.label = (WGPUStringView){"wgml", WGPU_STRLEN};
    dd.requiredFeatureCount = nreq;
    dd.requiredFeatures = req;
    dd.requiredLimits = &lim;
    dd.deviceLostCallbackInfo.mode = WGPUCallbackMode_AllowSpontaneous;
    dd.deviceLostCallbackInfo.callback = on_lost;
    dd.deviceLostCallbackInfo.userdata1 = ctx;
    dd.uncapturedErrorCallbackInfo.callback = on_error;
    dd.uncapturedErrorCallbackInfo.userdata1 = ctx;

    dev_req r;
    memset(&r, 0, sizeof r);
    WGPURequestDeviceCallbackInfo ci = WGPU_REQUEST_DEVICE_CALLBACK_INFO_INIT;
    ci.mode = WGPUCallbackMode_AllowProcessEvents;
    ci.callback = on_device;
    ci.userdata1 = &r;
    wgpuAdapterRequestDevice(ctx->adapter, &dd, ci);
    bool ok = wg_wait_flag(ctx, &r.done, 60.0);
    char line[400];
    adapter_line(&ai, line, sizeof line);
    adapters_free(&s, pick);
    if (!ok || !r.dev) {
        wgpuAdapterInfoFreeMembers(ai);
        return wg_fail(ok ? WGML_ERR_DEVICE : WGML_ERR_TIMEOUT, "could not create a device on %s: %s",
                       line, ok ? r.msg : "no answer in 60 s");
    }
    ctx->device = r.dev;
    ctx->queue = wgpuDeviceGetQueue(ctx->device);
    WGPULimits got = WGPU_LIMITS_INIT;
    wgpuDeviceGetLimits(ctx->device, &got);
    ctx->limits = got;
    ctx->info.features = enabled;
    fill_info(ctx, &ai, available);
    wgpuAdapterInfoFreeMembers(ai);
    return WGML_OK;
}

wgml_status wg_device_open(wgml_ctx *ctx, const wgml_ctx_options *o)
{
    wg_disk_cache_setup();
    ctx->instance = wgpuCreateInstance(NULL);
    if (!ctx->instance)
        return wg_fail(WGML_ERR_NO_ADAPTER, "could not create a WebGPU instance");
    return open_device(ctx, o);
}

void wg_device_close(wgml_ctx *ctx)
{
    if (ctx->queue)
        wgpuQueueRelease(ctx->queue);
    if (ctx->device) {
        wgpuDeviceDestroy(ctx->device);
        wgpuDeviceRelease(ctx->device);
    }
    if (ctx->adapter)
        wgpuAdapterRelease(ctx->adapter);
    if (ctx->instance)
        wgpuInstanceRelease(ctx->instance);
    ctx->queue = NULL;
    ctx->device = NULL;
    ctx->adapter = NULL;
    ctx->instance = NULL;
}
