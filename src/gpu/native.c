/*
 * The only file that calls implementation-specific extensions (wgpu.h).
 * Building against another webgpu.h implementation (Dawn) means providing
 * these few functions with that implementation's equivalents; the Dawn
 * branches below use only standard webgpu.h and are not tested here.
 */
#include "internal.h"

#ifndef WGML_WEBGPU_DAWN
#include "wgpu.h"
#endif

size_t wg_native_enumerate_adapters(WGPUInstance inst, WGPUAdapter *out, size_t cap)
{
#ifndef WGML_WEBGPU_DAWN
    size_t n = wgpuInstanceEnumerateAdapters(inst, NULL, NULL);
    if (!out || n == 0)
        return n;
    WGPUAdapter tmp[32];
    if (n > 32)
        n = 32;
    n = wgpuInstanceEnumerateAdapters(inst, NULL, tmp);
    for (size_t i = 0; i < n; i++) {
        if (i < cap)
            out[i] = tmp[i];
        else
            wgpuAdapterRelease(tmp[i]);
    }
    return n;
#else
    (void)inst; (void)out; (void)cap;
    return 0; /* device.c falls back to requestAdapter */
#endif
}

WGPUShaderModule wg_native_create_module(WGPUDevice dev, const WGPUShaderModuleDescriptor *d, bool checks)
{
#ifndef WGML_WEBGPU_DAWN
    /* Runtime bounds checks cost 18x on a tiled GEMM (measured on an H100);
     * wgml kernels guard their own indices, so they run unchecked. */
    return wgpuDeviceCreateShaderModuleTrusted(dev, d,
        checks ? WGPUShaderRuntimeChecks_BoundsChecks : WGPUShaderRuntimeChecks_None);
#else
    (void)checks;
    return wgpuDeviceCreateShaderModule(dev, d);
#endif
}

bool wg_native_poll(WGPUDevice dev, bool wait)
{
#ifndef WGML_WEBGPU_DAWN
    return wgpuDevicePoll(dev, wait, NULL);
#else
    (void)wait;
    wgpuDeviceTick(dev);
    return true;
#endif
}

void wg_native_write_timestamp(WGPUComputePassEncoder pass, WGPUQuerySet qs, uint32_t index)
{
#ifndef WGML_WEBGPU_DAWN
    wgpuComputePassEncoderWriteTimestamp(pass, qs, index);
#else
    (void)pass; (void)qs; (void)index;
#endif
}

double wg_native_timestamp_period(WGPUQueue q)
{
#ifndef WGML_WEBGPU_DAWN
    /* wgpu-native resolves raw ticks; the period converts them to ns. */
    return (double)wgpuQueueGetTimestampPeriod(q);
#else
    (void)q;
    return 1.0; /* Dawn resolves nanoseconds */
#endif
}

uint32_t wg_native_version(void)
{
#ifndef WGML_WEBGPU_DAWN
    return wgpuGetVersion();
#else
    return 0;
#endif
}

WGPUFeatureName wg_native_feature_id(unsigned f)
{
    switch (f) {
    case WGML_FEATURE_F16: return WGPUFeatureName_ShaderF16;
    case WGML_FEATURE_TIMESTAMPS: return WGPUFeatureName_TimestampQuery;
#ifndef WGML_WEBGPU_DAWN
    /* wgpu-native advertises subgroups under its native id, not the
     * standard WGPUFeatureName_Subgroups. */
    case WGML_FEATURE_SUBGROUPS: return (WGPUFeatureName)WGPUNativeFeature_Subgroup;
    case WGML_FEATURE_TIMESTAMPS_IN_PASSES: return (WGPUFeatureName)WGPUNativeFeature_TimestampQueryInsidePasses;
    case WGML_FEATURE_IMMEDIATES: return (WGPUFeatureName)WGPUNativeFeature_Immediates;
    case WGML_FEATURE_PIPELINE_CACHE: return (WGPUFeatureName)WGPUNativeFeature_PipelineCache;
#else
    case WGML_FEATURE_SUBGROUPS: return WGPUFeatureName_Subgroups;
#endif
    default: return (WGPUFeatureName)0;
    }
}
