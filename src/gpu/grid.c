/*
 * Occupancy discovery for persistent kernels (src/kernels/grid.wgsl,
 * runtime.h wg_grid_discover): how many workgroups of one pipeline the
 * device runs at once, asked once per pipeline and kept on the kernel.
 *
 * It runs in a submission of its own, not the stream's: an op asks while
 * a graph records its nodes, when the stream takes no read-back.  The
 * discovery form of a kernel touches only grid words GC_DISC and GC_COUNT
 * (3 and 4), which are zero before (written here) and after (reset here),
 * so work already encoded into the stream and submitted later sees the
 * words as every persistent dispatch leaves them.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GC_DISC = 3, GC_COUNT = 4 }; /* grid.wgsl's words */

wgml_status wg_grid_discover(wgml_ctx *ctx, wgml_kernel *k, const void *params, size_t psize, uint32_t grid,
                             uint32_t *count)
{
    *count = 0;
    if (k->grid_count) {
        *count = k->grid_count;
        return WGML_OK;
    }
    if (psize > WG_PARAMS_MAX || k->n_buffers > WG_MAX_BUFFERS || grid == 0 ||
        grid > ctx->limits.maxComputeWorkgroupsPerDimension)
        return wg_fail(WGML_ERR_INTERNAL, "wg_grid_discover(%s): %zu parameter bytes, %d bindings, %u workgroups",
                       k->name, psize, k->n_buffers, grid);
    /* read_write bindings: the grid words; read-only ones: the ticket
     * words (another buffer: one buffer is bound writable or not at all) */
    wg_binding b[WG_MAX_BUFFERS];
    for (int i = 0; i < k->n_buffers; i++)
        b[i] = (k->readonly_mask >> i) & 1u ? wg_tickets_bind(ctx) : wg_grid_bind(ctx);
    WGPUBufferDescriptor ud = {0};
    ud.size = WG_PARAMS_MAX;
    ud.usage = WGPUBufferUsage_Uniform | WGPUBufferUsage_CopyDst;
    WGPUBufferDescriptor sd = {0};
    sd.size = 32;
    sd.usage = WGPUBufferUsage_MapRead | WGPUBufferUsage_CopyDst;
    WGPUBuffer ubuf = wgpuDeviceCreateBuffer(ctx->device, &ud), sbuf = wgpuDeviceCreateBuffer(ctx->device, &sd);
    WGPUBindGroup bg = ubuf ? wg_bind_group_create(ctx, k->bgl, ubuf, b, k->n_buffers) : NULL;
    wgml_status st = WGML_OK;
    if (!ubuf || !sbuf || !bg) {
        st = wg_fail(WGML_ERR_OOM, "wg_grid_discover(%s): could not make its buffers", k->name);
        goto done;
    }
    uint8_t pb[WG_PARAMS_MAX] = {0};
    memcpy(pb, params, psize);
    wgpuQueueWriteBuffer(ctx->queue, ubuf, 0, pb, sizeof pb);
    static const uint32_t zero[2] = {0, 0};
    wgml_buffer *gw = wg_grid_bind(ctx).buffer;
    wgpuQueueWriteBuffer(ctx->queue, gw->buf, WG_GRID_AT + GC_DISC * 4, zero, sizeof zero);
    WGPUCommandEncoder enc = wgpuDeviceCreateCommandEncoder(ctx->device, NULL);
    WGPUComputePassEncoder pass = wgpuCommandEncoderBeginComputePass(enc, NULL);
    uint32_t off = 0;
    wgpuComputePassEncoderSetPipeline(pass, k->pipeline);
    wgpuComputePassEncoderSetBindGroup(pass, 0, bg, 1, &off);
    wgpuComputePassEncoderDispatchWorkgroups(pass, grid, 1, 1);
    wgpuComputePassEncoderEnd(pass);
    wgpuComputePassEncoderRelease(pass);
    wgpuCommandEncoderCopyBufferToBuffer(enc, gw->buf, WG_GRID_AT, sbuf, 0, 32);
    WGPUCommandBuffer cb = wgpuCommandEncoderFinish(enc, NULL);
    wgpuCommandEncoderRelease(enc);
    wgpuQueueSubmit(ctx->queue, 1, &cb);
    wgpuCommandBufferRelease(cb);
    wgpuQueueWriteBuffer(ctx->queue, gw->buf, WG_GRID_AT + GC_DISC * 4, zero, sizeof zero);
    ctx->stats.waits++;
    uint32_t w[8];
    char what[160];
    snprintf(what, sizeof what, "wg_grid_discover(%s)", k->name);
    if ((st = wg_map_read(ctx, sbuf, sizeof w, w, what)) != WGML_OK || (st = wg_check(ctx)) != WGML_OK)
        goto done;
    uint32_t n = w[GC_COUNT];
    if (n == 0 || n > grid) {
        st = wg_fail(WGML_ERR_DEVICE, "%s: no sensible count (%u of %u workgroups)", what, n, grid);
        goto done;
    }
    k->grid_count = n;
    *count = n;
    const char *v = getenv("WGML_GRID_VERBOSE"); /* bench/run_h100.sh: what discovery found */
    if (v && *v == '1')
        fprintf(stderr, "wgml: %s: %u workgroups resident together (of %u launched)\n", k->name, n, grid);
done:
    if (bg)
        wgpuBindGroupRelease(bg);
    if (ubuf)
        wgpuBufferRelease(ubuf);
    if (sbuf)
        wgpuBufferRelease(sbuf);
    return st;
}
