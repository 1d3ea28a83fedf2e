/*
 * The strided launcher behind every elementwise-shaped op: binds each
 * operand's window of its buffer, splits the iteration space when a window
 * would exceed one storage binding, and dispatches the kernel with
 * wg_ew_params.  Kernels read those parameters through ew_common.wgsl.
 */
#include "ops.h"

#include <string.h>

#define WG_THREADS 256
#define PER_THREAD 4

typedef struct win {
    uint64_t first, last; /* bytes, inclusive */
} win;

static win extent(const wg_operand *o, const int64_t iter[4], uint64_t esz)
{
    win w = {o->v.offset * esz, wg_span_last(o->v.offset, o->v.strides, iter) * esz + esz - 1};
    return w;
}

static bool shares_buffer(const wg_operand *a, const wg_operand *b)
{
    return a->t->st->buf == b->t->st->buf;
}

static wgml_status launch_one(wgml_ctx *ctx, wgml_kernel *k, wg_operand *ops, int nops, const int64_t iter[4],
                              const float fp[4], const uint32_t ip[4], bool vec4)
{
    wg_ew_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[4];
    uint64_t n = (uint64_t)wg_nelem4(iter);
    for (int i = 0; i < 4; i++)
        p.shape[i] = (uint32_t)iter[i];
    p.n = (uint32_t)n;
    for (int j = 0; j < nops; j++) {
        uint64_t esz = wg_dtype(ops[j].t->dtype)->block_bytes;
        win w = extent(&ops[j], iter, esz);
        uint64_t rem;
        b[j] = wg_bind_from(ops[j].t->st->buf, w.first, w.last + 1 - w.first, &rem);
        if (vec4) /* whole vectors: the buffer's size is a multiple of 16 */
            b[j].size = wg_align_up(b[j].size, 16) <= wg_buffer_alloc(ops[j].t->st->buf) - b[j].offset
                            ? wg_align_up(b[j].size, 16) : b[j].size;
        p.offs[j] = (uint32_t)(rem / esz);
        for (int i = 0; i < 4; i++)
            p.st[j][i] = (uint32_t)ops[j].v.strides[i];
    }
    if (fp)
        memcpy(p.fp, fp, sizeof p.fp);
    if (ip)
        memcpy(p.ip, ip, sizeof p.ip);
    /* vec4 kernels: one vector per thread (fastest shape on an H100, see
     * `wgml bench variants`); scalar ones: PER_THREAD elements. */
    uint64_t per = vec4 ? 4 : PER_THREAD;
    uint64_t groups = (n + WG_THREADS * per - 1) / (WG_THREADS * per);
    return wg_dispatch(ctx, k, b, nops, &p, sizeof p, (uint32_t)groups, 1, 1);
}

/* Fits when every window is within one binding and indices fit in u32. */
static bool fits(wgml_ctx *ctx, wg_operand *ops, int nops, const int64_t iter[4])
{
    uint64_t cap = wg_window_cap(ctx);
    if ((uint64_t)wg_nelem4(iter) > 0xffffffffull - WG_THREADS * PER_THREAD)
        return false;
    for (int j = 0; j < nops; j++) {
        win w = extent(&ops[j], iter, wg_dtype(ops[j].t->dtype)->block_bytes);
        if (w.last + 1 - w.first > cap)
            return false;
    }
    return true;
}

static wgml_status launch_split(wgml_ctx *ctx, wgml_kernel *k, wg_operand *ops, int nops, const int64_t iter[4],
                                const float fp[4], const uint32_t ip[4])
{
    if (fits(ctx, ops, nops, iter))
        return launch_one(ctx, k, ops, nops, iter, fp, ip, false);
    int d = wg_split_dim(iter);
    if (d < 0) { /* one row (or element) left: name its widest operand */
        uint64_t widest = 0;
        int which = 0;
        for (int j = 0; j < nops; j++) {
            win w = extent(&ops[j], iter, wg_dtype(ops[j].t->dtype)->block_bytes);
            if (w.last + 1 - w.first > widest) {
                widest = w.last + 1 - w.first;
                which = j;
            }
        }
        return wg_fail_window(ctx, widest, "kernel '%s': operand %d over one row of %lld elements", wg_kernel_name(k), which,
                              (long long)iter[3]);
    }
    for (int part = 0; part < 2; part++) {
        int64_t sub[4], start;
        wg_split_part(iter, d, part, sub, &start);
        wg_operand o2[4];
        for (int j = 0; j < nops; j++) {
            o2[j] = ops[j];
            o2[j].v.offset += (uint64_t)(start * ops[j].v.strides[d]);
            o2[j].v.shape[d] = sub[d];
        }
        wgml_status st = launch_split(ctx, k, o2, nops, sub, fp, ip);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

bool wg_vec4_dtype(const wgml_ctx *ctx, wgml_dtype dt)
{
    bool ok32 = wg_dtype(dt)->block_bytes == 4 && wg_dtype(dt)->kind != WG_KIND_QUANT;
    return ok32 || (dt == WGML_F16 && wg_has(ctx, WGML_FEATURE_F16));
}

wgml_status wg_ew_launch(wgml_ctx *ctx, const char *file, const char *entry, const char *defines, wg_operand *ops,
                         int nops, const int64_t iter[4], const float fp[4], const uint32_t ip[4])
{
    if (wg_nelem4(iter) == 0)
        return wg_check(ctx);
    char defs[1536]; /* a fused chain's expression is long (wg_unary_chain) */
    size_t u = 0;
    bool contig = true;
    unsigned ro = 0;
    for (int j = 0; j < nops; j++) {
        const wg_operand *o = &ops[j];
        /* A buffer both read and written in one dispatch must be bound
         * read_write everywhere: WebGPU forbids mixing read-only and
         * writable storage bindings of one buffer. */
        bool rw = o->write;
        for (int i = 0; i < nops && !o->write; i++)
            if (i != j && ops[i].write && shares_buffer(o, &ops[i]))
                rw = true;
        if (!rw)
            ro |= 1u << j;
        char up[8] = {0};
        for (size_t c = 0; o->name[c] && c + 1 < sizeof up; c++)
            up[c] = (char)(o->name[c] >= 'a' && o->name[c] <= 'z' ? o->name[c] - 32 : o->name[c]);
        int w = snprintf(defs + u, sizeof defs - u, "%s%s_DT=%s;%s_MODE=%s", u ? ";" : "", up,
                         wg_dtype(o->t->dtype)->wgsl, up, o->write ? "w" : (rw ? "rw" : "r"));
        u += w > 0 ? (size_t)w : 0;
        wg_view4 v = o->v;
        for (int i = 0; i < 4; i++)
            v.shape[i] = iter[i];
        contig = contig && wg_view4_contiguous(&v);
    }
    if (contig)
        u += (size_t)snprintf(defs + u, sizeof defs - u, ";CONTIG");
    /* Kernels that have a VEC4 path say so with VEC4OK; it is taken when
     * every operand is contiguous, 16-byte aligned, 32-bit (or native
     * f16) and no split is needed (a split could break the alignment). */
    bool vec4 = contig && defines && strstr(defines, "VEC4OK") && fits(ctx, ops, nops, iter);
    for (int j = 0; j < nops && vec4; j++) {
        vec4 = wg_vec4_dtype(ctx, ops[j].t->dtype) && ops[j].v.offset % 4 == 0;
    }
    if (vec4)
        u += (size_t)snprintf(defs + u, sizeof defs - u, ";VEC4");
    if (defines && *defines)
        snprintf(defs + u, sizeof defs - u, ";%s", defines);
    /* Writable operands that are read too ("rw") keep their mode; the mode
     * string tells #tensor whether to emit a store. */
    wg_kernel_ref ref = {file, entry, defs, nops, ro};
    wgml_kernel *k = NULL;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    if (vec4)
        return launch_one(ctx, k, ops, nops, iter, fp, ip, true);
    return launch_split(ctx, k, ops, nops, iter, fp, ip);
}
