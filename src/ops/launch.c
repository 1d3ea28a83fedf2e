/*
 * The strided launcher behind every elementwise-shaped op: binds each
 * operand's window of its buffer, splits the iteration space when a window
 * would exceed one storage binding (wg_win_split, window.c; any dim may be
 * cut, the innermost too), and dispatches the kernel with wg_ew_params.  Kernels read those parameters through ew_common.wgsl.
 */
#include "ops.h"

#include <string.h>

#define WG_THREADS 256
#define PER_THREAD 4

#define MAX_ELEMS (0xffffffffull - WG_THREADS * PER_THREAD) /* indices stay u32 */

typedef struct ew_job {
    wgml_ctx *ctx;
    wgml_kernel *k;
    int nops;
    const float *fp;
    const uint32_t *ip;
    bool vec4;
} ew_job;

/* One dispatch over iter with every window fitting one binding. */
static wgml_status launch_one(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    const ew_job *j = user;
    (void)origin;
    wg_ew_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[4];
    uint64_t n = (uint64_t)wg_nelem4(iter);
    for (int i = 0; i < 4; i++)
        p.shape[i] = (uint32_t)iter[i];
    p.n = (uint32_t)n;
    for (int o = 0; o < j->nops; o++) {
        b[o] = wg_win_bind(&w[o], iter, &p.offs[o]);
        if (j->vec4) /* whole vectors: the buffer's size is a multiple of 16 */
            b[o].size = wg_align_up(b[o].size, 16) <= wg_buffer_alloc(w[o].buf) - b[o].offset
                            ? wg_align_up(b[o].size, 16) : b[o].size;
        for (int i = 0; i < 4; i++)
            p.st[o][i] = (uint32_t)w[o].st[i];
    }
    if (j->fp)
        memcpy(p.fp, j->fp, sizeof p.fp);
    if (j->ip)
        memcpy(p.ip, j->ip, sizeof p.ip);
    /* vec4 kernels: one vector per thread (fastest shape on an H100, see
     * `wgml bench variants`); scalar ones: PER_THREAD elements. */
    uint64_t per = j->vec4 ? 4 : PER_THREAD;
    uint64_t groups = (n + WG_THREADS * per - 1) / (WG_THREADS * per);
    return wg_dispatch(j->ctx, j->k, b, j->nops, &p, sizeof p, (uint32_t)groups, 1, 1);
}

static void wins_of(const wg_operand *ops, int nops, wg_win *w)
{
    for (int j = 0; j < nops; j++)
        w[j] = wg_win_of(ops[j].t, &ops[j].v, ops[j].name);
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
            if (i != j && ops[i].write && o->t->st->buf == ops[i].t->st->buf)
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
    wg_win w[4];
    wins_of(ops, nops, w);
    bool vec4 = contig && defines && strstr(defines, "VEC4OK") && wg_win_fits(ctx, w, nops, iter, MAX_ELEMS);
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
    ew_job job = {ctx, k, nops, fp, ip, vec4};
    char who[96];
    snprintf(who, sizeof who, "kernel '%s'", wg_kernel_name(k));
    /* Elementwise: any dim may be cut, the innermost too (a 1-D operand
     * larger than one binding). */
    return wg_win_split(ctx, w, nops, iter, 4, MAX_ELEMS, who, launch_one, &job);
}
