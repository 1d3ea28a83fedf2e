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
    uint32_t chunk[4];  /* chunked rows: chunks per row, chunk length, row length, this chunk */
} row_params;

wg_row_operand wg_row_operand_of(const wgml_tensor *t, const int64_t shape4[4], const int perm[4], const char *name,
                                 bool write)
{
    wg_view4 v;
    wg_view4_bcast(t, shape4, &v);
    wg_row_operand o = {t, v.offset, {0, 0, 0, 0}, name, write, false, 0};
    for (int i = 0; i < 4; i++)
        o.st[i] = v.strides[perm[i]];
    return o;
}

static uint64_t esize(const wgml_tensor *t) { return wg_dtype(t->dtype)->block_bytes; }

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

/* The window binder's view of the slots; an absent slot is absent there
 * too (its placeholder is bound from the operand it borrows). */
static void wins_of(const wg_row_operand *ops, int nops, wg_win *w)
{
    for (int j = 0; j < nops; j++) {
        const wg_row_operand *o = &ops[j];
        wg_win x = {o->t ? o->t->st->buf : NULL, o->offset, {o->st[0], o->st[1], o->st[2], o->st[3]},
                    o->t ? esize(o->t) : 4, o->tail, o->name};
        w[j] = x;
    }
}

typedef struct rows_job {
    wgml_ctx *ctx;
    wgml_kernel *k;
    const wg_row_operand *ops;
    int nops;
    const float *fp;
    const uint32_t *ip;
    const uint32_t *chunk;
    bool vec;
} rows_job;

/* One dispatch over rows whose windows fit (w: the slots moved to this
 * block; origin: where it starts in the launch, for kernels that need
 * absolute coordinates, like softmax's ALiBi head). */
static wgml_status rows_one(void *user, const wg_win *w, const int64_t iter[4], const int64_t origin[4])
{
    const rows_job *j = user;
    row_params p;
    memset(&p, 0, sizeof p);
    wg_binding b[WG_ROW_MAX_OPS];
    for (int i = 0; i < 4; i++)
        p.shape[i] = (uint32_t)iter[i];
    for (int o = 0; o < j->nops; o++) {
        if (w[o].buf) {
            b[o] = wg_win_bind(&w[o], iter, &p.offs[o]);
            for (int i = 0; i < 4; i++)
                p.st[o][i] = (uint32_t)w[o].st[i];
            continue;
        }
        /* placeholder: the first element only, or the first vector (the
         * smallest binding an array of vectors accepts) of the operand
         * bound in its place */
        const wg_win *x = &w[bound(j->ops, j->nops, o) - j->ops];
        const int64_t one[4] = {1, 1, 1, j->vec && j->ops[o].vec ? 4 : 1};
        wg_win first = {x->buf, x->offset, {0, 0, 0, 1}, x->esz, 0, x->name};
        uint32_t unused;
        b[o] = wg_win_bind(&first, one, &unused);
    }
    if (j->fp)
        memcpy(p.fp, j->fp, sizeof p.fp);
    if (j->ip)
        memcpy(p.ip, j->ip, sizeof p.ip);
    if (j->chunk)
        memcpy(p.chunk, j->chunk, sizeof p.chunk);
    for (int i = 0; i < 4; i++)
        p.origin[i] = (uint32_t)origin[i];
    uint64_t rows = (uint64_t)(iter[0] * iter[1] * iter[2]);
    return wg_dispatch(j->ctx, j->k, b, j->nops, &p, sizeof p, (uint32_t)rows, 1, 1);
}

/* Vectors per thread for the ROWS4 path (see wg_rows_launch), 0 if not
 * taken.  Strides and offsets that are multiples of 4 stay so through
 * the row cuts (wg_win_split moves them by multiples of row strides) and
 * the 256-byte binding offsets. */
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
    bool any = false;
    for (int j = 0; j < nops; j++) {
        const wg_row_operand *o = &ops[j];
        if (!o->vec || !o->t)
            continue;
        any = true;
        if (!wg_vec4_dtype(ctx, o->t->dtype) || o->st[3] != 1 || o->offset % 4 != 0)
            return 0;
        for (int i = 0; i < 3; i++)
            if (o->st[i] % 4 != 0)
                return 0;
    }
    return any ? r : 0; /* chunked rows have no vector slots */
}

/* Rows never exceed this count per dispatch (a 1-D grid of u32). */
static uint64_t rows_max_elems(const int64_t iter[4])
{
    uint64_t rows = 0xffffffffull - 65536;
    return (uint64_t)iter[3] > UINT64_MAX / rows ? UINT64_MAX : rows * (uint64_t)iter[3];
}

/* Builds the kernel for ops over iter (wg_len: the row length that picks
 * the workgroup size) and runs it on blocks of rows that fit. */
static wgml_status rows_run(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                            const wg_row_operand *ops, int nops, const int64_t iter[4], int64_t wg_len,
                            const float fp[4], const uint32_t ip[4], const uint32_t chunk[4])
{
    /* Rows up to 1024 (16 elements a thread) take small workgroups: more
     * rows in flight per SM, which is what short rows are bound by. */
    int wg = wg_len <= 1024 ? 64 : 256;
    int rv = rows_vec_count(ctx, ops, nops, iter, wg, defines);
    if (defines && strstr(defines, "Q8OUT")) {
        /* norm.c's codes: the vector path's only, its row kept in workgroup
         * memory (R x WG vectors, beside the reduction's 3 x WG floats);
         * elsewhere the caller falls back */
        wgml_device_info in;
        if (!rv || wgml_device_info_get(ctx, &in) != WGML_OK ||
            (uint64_t)rv * (uint64_t)wg * 16 + 3 * (uint64_t)wg * 4 + 16 > in.max_workgroup_storage)
            return WGML_ERR_UNSUPPORTED;
    }
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
    rows_job job = {ctx, k, ops, nops, fp, ip, chunk, rv != 0};
    wg_win w[WG_ROW_MAX_OPS];
    wins_of(ops, nops, w);
    char who[96];
    snprintf(who, sizeof who, "kernel '%s'", wg_kernel_name(k));
    /* Only row dims are cut: a row is one workgroup's. */
    return wg_win_split(ctx, w, nops, iter, 3, rows_max_elems(iter), who, rows_one, &job);
}

/* A row of iter[3] elements cut into K pieces of C that fit one window
 * (the last one shorter); false when not even one element fits. */
static bool row_split(wgml_ctx *ctx, const wg_row_operand *ops, int nops, const int64_t iter[4], int64_t *K,
                      int64_t *C)
{
    wg_win w[WG_ROW_MAX_OPS];
    wins_of(ops, nops, w);
    const int64_t row[4] = {1, 1, 1, iter[3]};
    int64_t most = wg_win_most(ctx, w, nops, row, 3, UINT32_MAX), L = iter[3];
    if (most == 0)
        return false;
    *K = (L + most - 1) / most;
    *C = (L + *K - 1) / *K;
    *K = (L + *C - 1) / *C;
    return true;
}

/* Rows longer than one window, in chunks of the row that fit: a PARTIAL
 * pass writes each (row, chunk)'s statistics to two f32 scratch tensors
 * [rows, K] in slots qslot and qslot + 1, then a COMBINE pass merges a
 * row's K partials and writes the chunk's outputs.  Per-element operands
 * move along the row with the chunk; p.chunk = {K, C, L, chunk index}. */
static wgml_status rows_chunked(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                                const wg_row_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                                const uint32_t ip[4], int qslot)
{
    int64_t L = iter[3], K, C;
    if (!row_split(ctx, ops, nops, iter, &K, &C)) /* not even one element fits: the row launcher names it */
        return rows_run(ctx, file, entry, defines, ops, nops, iter, iter[3], fp, ip, NULL);
    int64_t rows = iter[0] * iter[1] * iter[2];
    if ((uint64_t)K > UINT32_MAX || (uint64_t)rows > UINT64_MAX / 8 / (uint64_t)K)
        return wg_fail(WGML_ERR_LIMIT, "rows of %lld elements: too many chunks", (long long)L);
    wgml_tensor *q[2] = {NULL, NULL};
    const int64_t qshape[1] = {rows * K};
    wgml_status st = WGML_OK;
    for (int i = 0; i < 2 && st == WGML_OK; i++)
        st = wg_scratch_tensor(ctx, WGML_F32, 1, qshape, &q[i]);
    int n = qslot + 2 > nops ? qslot + 2 : nops;
    char defs[256];
    for (int pass = 0; pass < 2 && st == WGML_OK; pass++) {
        snprintf(defs, sizeof defs, "CHUNKED;%s;%s", pass ? "COMBINE" : "PARTIAL", defines ? defines : "");
        for (int64_t c = 0; c < K && st == WGML_OK; c++) {
            wg_row_operand o2[WG_ROW_MAX_OPS];
            for (int j = 0; j < nops; j++) {
                o2[j] = ops[j];
                o2[j].offset += (uint64_t)(c * C * ops[j].st[3]);
                o2[j].vec = false;
            }
            for (int i = 0; i < 2; i++) {
                /* PARTIAL writes element c of the row's run; COMBINE reads
                 * all K (its window: the run's first element plus a tail) */
                uint64_t q0 = wg_view4_of(q[i]).offset; /* scratch may sit inside a graph's arena */
                wg_row_operand x = {q[i], q0 + (pass ? 0 : (uint64_t)c), {iter[1] * iter[2] * K, iter[2] * K, K, 0},
                                    qslot + i < nops ? ops[qslot + i].name : i ? "qb" : "qa", !pass, false,
                                    pass ? (uint64_t)(K - 1) : 0};
                o2[qslot + i] = x;
            }
            int64_t sub[4] = {iter[0], iter[1], iter[2], L - c * C < C ? L - c * C : C};
            const uint32_t chunk[4] = {(uint32_t)K, (uint32_t)C, (uint32_t)L, (uint32_t)c};
            st = rows_run(ctx, file, entry, defs, o2, n, sub, C, fp, ip, chunk);
        }
    }
    wgml_tensor_free(q[0]);
    wgml_tensor_free(q[1]);
    return st;
}

/* Rows longer than one window of a kernel that reduces nothing along
 * them (qslot WG_ROWS_PIECES): each piece of the row that fits is a launch
 * of its own, every operand moved along the row to the piece's start. */
static wgml_status rows_pieces(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                               const wg_row_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                               const uint32_t ip[4])
{
    int64_t L = iter[3], K, C;
    if (!row_split(ctx, ops, nops, iter, &K, &C)) /* not even one element fits: the row launcher names it */
        return rows_run(ctx, file, entry, defines, ops, nops, iter, iter[3], fp, ip, NULL);
    wgml_status st = WGML_OK;
    for (int64_t c = 0; c * C < L && st == WGML_OK; c++) {
        wg_row_operand o2[WG_ROW_MAX_OPS];
        for (int j = 0; j < nops; j++) {
            o2[j] = ops[j];
            o2[j].offset += (uint64_t)(c * C * ops[j].st[3]);
            o2[j].vec = false;
        }
        const int64_t sub[4] = {iter[0], iter[1], iter[2], L - c * C < C ? L - c * C : C};
        st = rows_run(ctx, file, entry, defines, o2, nops, sub, C, fp, ip, NULL);
    }
    return st;
}

bool wg_rows_fit(wgml_ctx *ctx, const wg_row_operand *ops, int nops, int64_t len)
{
    wg_win w[WG_ROW_MAX_OPS];
    wins_of(ops, nops, w);
    const int64_t row[4] = {1, 1, 1, len};
    return wg_win_fits(ctx, w, nops, row, UINT32_MAX);
}

wgml_status wg_rows_launch(wgml_ctx *ctx, const char *file, const char *entry, const char *defines,
                           wg_row_operand *ops, int nops, const int64_t iter[4], const float fp[4],
                           const uint32_t ip[4], int qslot)
{
    if (wg_nelem4(iter) == 0)
        return wg_check(ctx);
    if (qslot != -1 && !wg_rows_fit(ctx, ops, nops, iter[3])) {
        if (defines && strstr(defines, "Q8OUT"))
            return WGML_ERR_UNSUPPORTED; /* as in rows_run */
        if (qslot == WG_ROWS_PIECES)
            return rows_pieces(ctx, file, entry, defines, ops, nops, iter, fp, ip);
        return rows_chunked(ctx, file, entry, defines, ops, nops, iter, fp, ip, qslot);
    }
    return rows_run(ctx, file, entry, defines, ops, nops, iter, iter[3], fp, ip, NULL);
}
