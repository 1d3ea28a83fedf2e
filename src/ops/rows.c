/*
 * The row launcher shared by the row ops (softmax.c, norm.c): one
 * workgroup per row of a 4-D iteration space, every operand read in place
 * through its own strides, windows split to fit storage bindings, and the
 * register-cached vector path (ROWS4) where the layout allows it.  See
 * rows.h for the contract and src/kernels/rows.wgsl for the kernel side.
 */
#include "rows.h"

#include <stdio.h>
#include <string.h>

typedef struct row_params {
    uint32_t shape[4];
    uint32_t offs[WG_ROW_MAX_OPS];
    uint32_t st[WG_ROW_MAX_OPS][4];
    float fp[4];
    uint32_t ip[4];
    uint32_t origin[4]; /* the launch's first row coordinates, after splits */
} row_params;

wg_row_operand wg_row_operand_of(const wgml_tensor *t, const int64_t shape4[4], const int perm[4], const char *name,
                                 bool write)
{
    wg_view4 v;
    wg_view4_bcast(t, shape4, &v);
    wg_row_operand o = {t, v.offset, {0, 0, 0, 0}, name, write, false};
    for (int i = 0; i < 4; i++)
        o.st[i] = v.strides[perm[i]];
    return o;
}

static uint64_t esize(const wgml_tensor *t) { return wg_dtype(t->dtype)->block_bytes; }

/* Bytes [first, last] an operand touches over iter. */
static void extent(const wg_row_operand *o, const int64_t iter[4], uint64_t *first, uint64_t *last)
{
    *first = o->offset * esize(o->t);
    *last = wg_span_last(o->offset, o->st, iter) * esize(o->t) + esize(o->t) - 1;
}

static bool rows_fit(wgml_ctx *ctx, const wg_row_operand *ops, int nops, const int64_t iter[4])
{
    uint64_t cap = wg_window_cap(ctx);
    if ((uint64_t)(iter[0] * iter[1] * iter[2]) > 0xffffffffull - 65536)
        return false;
    for (int j = 0; j < nops; j++) {
        if (!ops[j].t)
            continue;
        uint64_t a, b;
        extent(&ops[j], iter, &a, &b);
        if (b + 1 - a > cap)
            return false;
    }
    return true;
}

/* The operand bound in slot j: itself, or for an absent slot a present
 * one of the same direction (so a placeholder for an output is writable
 * without making an input writable). */
static const wg_row_operand *bound(const wg_row_operand *ops, int nops, int j)
{
    if (ops[j].t)
        return &ops[j];
    for (int i = 0; ops[j].write && i < nops; i++)
        if (ops[i].t && ops[i].write)
            return &ops[i];
    return &ops[0];
}

static const wgml_buffer *buf_of(const wg_row_operand *ops, int nops, int j)
{
    return bound(ops, nops, j)->t->st->buf;
}

static wgml_status rows_one(wgml_ctx *ctx, wgml_kernel *k, const wg_row_operand *ops, int nops,
                            const int64_t iter[4], const int64_t origin[4], const float fp[4], const uint32_t ip[4],
                            bool vec)
{
    row_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[WG_ROW_MAX_OPS];
    for (int i = 0; i < 4; i++)
        p.shape[i] = (uint32_t)iter[i];
    for (int j = 0; j < nops; j++) {
        uint64_t a, e, rem;
        const wg_row_operand *o = bound(ops, nops, j);
        extent(o, iter, &a, &e);
        /* placeholder: the first element only, or the first vector (the
         * smallest binding an array of vectors accepts) */
        if (!ops[j].t)
            e = a + esize(o->t) * (vec && ops[j].vec ? 4 : 1) - 1;
        b[j] = wg_bind_from(o->t->st->buf, a, e + 1 - a, &rem);
        if (!ops[j].t)
            continue;
        p.offs[j] = (uint32_t)(rem / esize(o->t));
        for (int i = 0; i < 4; i++)
            p.st[j][i] = (uint32_t)o->st[i];
    }
    if (fp)
        memcpy(p.fp, fp, sizeof p.fp);
    if (ip)
        memcpy(p.ip, ip, sizeof p.ip);
    for (int i = 0; i < 4; i++)
        p.origin[i] = (uint32_t)origin[i];
    uint64_t rows = (uint64_t)(iter[0] * iter[1] * iter[2]);
    return wg_dispatch(ctx, k, b, nops, &p, sizeof p, (uint32_t)rows, 1, 1);
}

/* Halves the outermost row dim until every window fits one binding.
 * origin: where this part starts in the whole launch (kernels that need
 * absolute coordinates, like softmax's ALiBi head, add it). */
static wgml_status rows_split(wgml_ctx *ctx, wgml_kernel *k, const wg_row_operand *ops, int nops,
                              const int64_t iter[4], const int64_t origin[4], const float fp[4],
                              const uint32_t ip[4], bool vec)
{
    if (rows_fit(ctx, ops, nops, iter))
        return rows_one(ctx, k, ops, nops, iter, origin, fp, ip, vec);
    int d = wg_split_dim(iter);
    if (d < 0) { /* one row left: name its widest operand */
        uint64_t widest = 0, a, e;
        const char *what = "";
        for (int j = 0; j < nops; j++)
            if (ops[j].t && (extent(&ops[j], iter, &a, &e), e + 1 - a > widest)) {
                widest = e + 1 - a;
                what = ops[j].name;
            }
        return wg_fail_window(ctx, widest, "kernel '%s': one row of %lld elements of operand '%s'", wg_kernel_name(k),
                              (long long)iter[3], what);
    }
    for (int part = 0; part < 2; part++) {
        int64_t sub[4], start;
        wg_split_part(iter, d, part, sub, &start);
        wg_row_operand o2[WG_ROW_MAX_OPS];
        for (int j = 0; j < nops; j++) {
            o2[j] = ops[j];
            o2[j].offset += (uint64_t)(start * ops[j].st[d]);
        }
        int64_t org[4] = {origin[0], origin[1], origin[2], origin[3]};
        org[d] += start;
        wgml_status st = rows_split(ctx, k, o2, nops, sub, org, fp, ip, vec);
        if (st != WGML_OK)
            return st;
    }
    return WGML_OK;
}

/* Vectors per thread for the ROWS4 path (see wg_rows_launch), 0 if not
 * taken.  Strides and offsets that are multiples of 4 stay so through
 * rows_split's halving and the 256-byte binding offsets. */
static int rows_vec_count(wgml_ctx *ctx, const wg_row_operand *ops, int nops, const int64_t iter[4], int wg,
                          const char *defines)
{
    if (!defines || !strstr(defines, "ROWS4OK") || iter[3] % 4 != 0)
        return 0;
    int r = 1;
    while ((int64_t)r * 4 * wg < iter[3])
        r *= 2;
    if (r > 8)
        return 0;
    for (int j = 0; j < nops; j++) {
        const wg_row_operand *o = &ops[j];
        if (!o->vec || !o->t)
            continue;
        if (!wg_vec4_dtype(ctx, o->t->dtype) || o->st[3] != 1 || o->offset % 4 != 0)
            return 0;
        for (int i = 0; i < 3; i++)
            if (o->st[i] % 4 != 0)
                return 0;
    }
    return r;
}

wgml_status wg_rows_launch(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                           wg_row_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                           const uint32_t ip[4])
{
    if (wg_nelem4(iter) == 0)
        return wg_check(ctx);
    /* Rows up to 1024 (16 elements a thread) take small workgroups: more
     * rows in flight per SM, which is what short rows are bound by. */
    int wg = iter[3] <= 1024 ? 64 : 256;
    int rv = rows_vec_count(ctx, ops, nops, iter, wg, defines);
    char defs[640];
    size_t u = 0;
    if (rv) /* first, so profiles and kernel names show the path */
        u += (size_t)snprintf(defs, sizeof defs, "ROWS4;R=%d;", rv);
    unsigned ro = 0;
    for (int j = 0; j < nops; j++) {
        /* WebGPU forbids one buffer bound both read-only and writable in a
         * dispatch: a read operand sharing a written buffer is bound rw. */
        bool rw = ops[j].t && ops[j].write;
        for (int i = 0; i < nops && !rw; i++)
            rw = ops[i].t && ops[i].write && buf_of(ops, nops, i) == buf_of(ops, nops, j);
        if (!rw)
            ro |= 1u << j;
        /* Every slot is declared; an absent one with the dtype of the
         * operand bound in its place (kernels test a uniform flag before
         * touching it), so leaving out an operand of the common dtype
         * makes no new kernel variant. */
        char up[8] = {0};
        for (size_t c = 0; ops[j].name[c] && c + 1 < sizeof up; c++)
            up[c] = (char)(ops[j].name[c] >= 'a' && ops[j].name[c] <= 'z' ? ops[j].name[c] - 32 : ops[j].name[c]);
        int w = snprintf(defs + u, sizeof defs - u, "%s_DT=%s;%s_MODE=%s%s;", up,
                         wg_dtype(bound(ops, nops, j)->t->dtype)->wgsl, up,
                         ops[j].t && ops[j].write ? "w" : rw ? "rw" : "r", rv && ops[j].vec ? "4" : "");
        u += w > 0 ? (size_t)w : 0;
    }
    snprintf(defs + u, sizeof defs - u, "WG=%d;%s", wg, defines ? defines : "");
    wg_kernel_ref ref = {file, entry, defs, nops, ro};
    wgml_kernel *k = NULL;
    wgml_status st = wg_kernel_get(ctx, &ref, &k);
    if (st != WGML_OK)
        return st;
    const int64_t origin[4] = {0, 0, 0, 0};
    return rows_split(ctx, k, ops, nops, iter, origin, fp, ip, rv != 0);
}
