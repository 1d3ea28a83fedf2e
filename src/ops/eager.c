/*
 * The eager API: every public wgml_* op is its op table row's check, then
 * its implementation (the encode).  The check's output description must be
 * what the caller's out has; the implementation then checks the concrete
 * operands again (layouts, aliasing, quantised blocks) and records the
 * dispatches.
 *
 * The check and the implementation must agree: when one refuses what the
 * other accepts, the call fails with WGML_ERR_INTERNAL naming both, so the
 * whole op test suite (thousands of shapes, dtypes and bad calls) tests
 * the table's shape inference that graphs build on.  When both refuse, the
 * implementation's message is returned (it knows the concrete operands).
 */
#include "optable.h"

#include <string.h>

typedef struct call call;
struct call {
    int op;
    wg_op_params p;
    const wgml_tensor *in[WG_OP_MAX_IN];
    int nin;
    wgml_tensor *out;     /* compared with the check's output */
    wgml_tensor *out2;    /* top_k's indices (checked with flag 1) or norm's sum_out */
    bool any_float_out;   /* out may be any float dtype (softmax, norm) */
    /* Runs the op instead of the row's encode, for calls with operands the
     * row has no slot for (top_k's two outputs, batch norm's statistics). */
    wgml_status (*impl)(const call *c);
};

static void desc_of(const wgml_tensor *t, wg_desc *d)
{
    d->dtype = t->dtype;
    d->ndim = t->ndim;
    memcpy(d->shape, t->shape, sizeof d->shape);
}

static bool matches(const call *c, const wg_desc *want, const wgml_tensor *t)
{
    if (!t || t->ndim != want->ndim || memcmp(t->shape, want->shape, sizeof(int64_t) * (size_t)t->ndim))
        return false;
    return c->any_float_out ? wg_dtype_is_float(t->dtype) : t->dtype == want->dtype;
}

/* The check on c's operands: WGML_OK when it accepts them and out (and
 * out2) are what it computes.  Operands it cannot describe (NULL, another
 * context's) are the implementation's to refuse: returns -1 then. */
static int check(const call *c, char *msg, size_t n, uint64_t *scratch)
{
    const wg_op_def *def = wg_op_def_get(c->op);
    wg_desc d[WG_OP_MAX_IN];
    const wg_desc *dp[WG_OP_MAX_IN] = {0};
    for (int i = 0; i < c->nin; i++) {
        if (!c->in[i] && (i < def->min_in || c->op == WG_OP_CONCAT)) /* concat: every input required */
            return -1;
        if (c->in[i] && !wg_dtype(c->in[i]->dtype))
            return -1;
        if (c->in[i]) {
            desc_of(c->in[i], &d[i]);
            dp[i] = &d[i];
        }
    }
    if (c->out && !wg_dtype(c->out->dtype))
        return -1;
    wg_desc o;
    wgml_status st = def->check(&c->p, dp, c->nin, &o);
    if (st != WGML_OK) {
        snprintf(msg, n, "%s", wgml_last_error());
        return 1;
    }
    /* Scratch sized by out goes by the caller's out: softmax's and norm's
     * may be any float dtype where the check says x's (GROUP_NORM's
     * stand-in for a strided f32 out of an f16 x is twice the check's). */
    wg_desc od = o;
    if (c->out && c->any_float_out)
        desc_of(c->out, &od);
    *scratch = def->scratch ? def->scratch(&c->p, dp, c->nin, &od) : 0;
    char ws[96];
    if (c->out && !matches(c, &o, c->out)) {
        snprintf(msg, n, "the check computes %s %s for out", wgml_dtype_name(o.dtype), wg_desc_str(&o, NULL, ws, sizeof ws));
        return 1;
    }
    if (c->op == WG_OP_TOP_K && c->out2) {
        wg_op_params q = c->p;
        q.flag = 1;
        if ((st = def->check(&q, dp, c->nin, &o)) != WGML_OK || !matches(c, &o, c->out2)) {
            snprintf(msg, n, "the check computes %s %s for indices", wgml_dtype_name(o.dtype),
                     wg_desc_str(&o, NULL, ws, sizeof ws));
            return 1;
        }
    } else if (c->op == WG_OP_NORM && c->out2 && !matches(c, &o, c->out2)) {
        snprintf(msg, n, "the check computes %s for sum_out", wg_desc_str(&o, NULL, ws, sizeof ws));
        return 1;
    }
    return 0;
}

/* Counts the scratch an eager op takes (the pool serves it): the most it
 * holds at once, as a graph's arena would (wg_scratch_release winds
 * `used` back between an op's parts). */
typedef struct tally { uint64_t used, peak; } tally;
static wgml_status count_scratch(void *data, uint64_t bytes, const wgml_tensor **base, uint64_t *off)
{
    (void)base, (void)off;
    tally *t = data;
    t->used += wg_align_up(bytes, 256);
    t->peak = t->used > t->peak ? t->used : t->peak;
    return WGML_ERR_LIMIT;
}

static wgml_ctx *ctx_of(const call *c)
{
    for (int i = 0; i < c->nin; i++)
        if (c->in[i])
            return c->in[i]->ctx;
    return c->out ? c->out->ctx : NULL;
}

static wgml_status run(const call *c)
{
    char msg[512] = "";
    uint64_t declared = 0;
    int ck = check(c, msg, sizeof msg, &declared);
    const wg_op_def *def = wg_op_def_get(c->op);
    /* The scratch the op takes must stay within what its row declares. */
    wgml_ctx *ctx = ck == 0 ? ctx_of(c) : NULL;
    tally t = {0};
    bool counting = ctx && !wg_scratch_provided(ctx);
    if (counting)
        wg_set_scratch_provider(ctx, count_scratch, &t, &t.used);
    wgml_status st = c->impl ? c->impl(c) : def->encode(&c->p, c->in, c->nin, c->out, c->out2);
    if (counting)
        wg_set_scratch_provider(ctx, NULL, NULL, NULL);
    if (ck == 1 && st == WGML_OK)
        return wg_fail(WGML_ERR_INTERNAL, "wgml_%s: the op table's check refused a call the op accepted (a bug in "
                       "src/ops/optable.c): %s", def->name, msg);
    /* Every op that takes scratch declares it: a row without a scratch
     * function declares 0, so taking any there is the same bug. */
    if (st == WGML_OK && t.peak > declared)
        return wg_fail(WGML_ERR_INTERNAL, "wgml_%s: took %llu bytes of scratch, its op table row declares %llu (a bug "
                       "in its %s)", def->name, (unsigned long long)t.peak, (unsigned long long)declared,
                       def->scratch ? "sc_* function" : "row: it has no scratch function");
    return st;
}

/* ------------------------------------------------------------ elementwise */

wgml_status wgml_unary(wgml_unary_op op, const wgml_tensor *x, wgml_tensor *out, float p0, float p1)
{
    call c = {.op = WG_OP_UNARY, .p = {.sub = (int)op, .f = {p0, p1}}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

wgml_status wgml_binary(wgml_binary_op op, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out)
{
    call c = {.op = WG_OP_BINARY, .p = {.sub = (int)op}, .in = {a, b}, .nin = 2, .out = out};
    return run(&c);
}

wgml_status wgml_where(const wgml_tensor *cond, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out)
{
    call c = {.op = WG_OP_WHERE, .in = {cond, a, b}, .nin = 3, .out = out};
    return run(&c);
}

wgml_status wgml_cast(const wgml_tensor *x, wgml_tensor *out)
{
    call c = {.op = WG_OP_CAST, .p = {.dtype = out ? out->dtype : WGML_F32}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

wgml_status wgml_copy(const wgml_tensor *x, wgml_tensor *out)
{
    call c = {.op = WG_OP_COPY, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

wgml_status wgml_fill(wgml_tensor *out, double value)
{
    call c = {.op = WG_OP_FILL, .p = {.value = value}, .nin = 0, .out = out};
    if (out) {
        c.p.dtype = out->dtype;
        c.p.ndim = out->ndim;
        memcpy(c.p.shape, out->shape, sizeof c.p.shape);
    }
    return run(&c);
}

/* ------------------------------------------------------------ movement */

wgml_status wgml_permute(const wgml_tensor *x, const int *perm, wgml_tensor *out)
{
    call c = {.op = WG_OP_PERMUTE, .in = {x}, .nin = 1, .out = out};
    if (!x || !perm)
        return wg_permute_impl(x, perm, out);
    for (int i = 0; i < x->ndim; i++)
        c.p.a[i] = perm[i];
    return run(&c);
}

wgml_status wgml_repeat(const wgml_tensor *x, wgml_tensor *out)
{
    call c = {.op = WG_OP_REPEAT, .in = {x}, .nin = 1, .out = out};
    if (out) {
        c.p.ndim = out->ndim;
        memcpy(c.p.shape, out->shape, sizeof c.p.shape);
    }
    return run(&c);
}

wgml_status wgml_concat(const wgml_tensor *const *xs, int n, int axis, wgml_tensor *out)
{
    if (!xs || n < 1 || n > WG_OP_MAX_IN) /* more inputs than a table row takes: the implementation alone */
        return wg_concat_impl(xs, n, axis, out);
    call c = {.op = WG_OP_CONCAT, .p = {.axis = axis}, .nin = n, .out = out};
    for (int i = 0; i < n; i++)
        c.in[i] = xs[i];
    return run(&c);
}

wgml_status wgml_pad(const wgml_tensor *x, const int64_t *before, const int64_t *after, wgml_pad_mode mode,
                     double value, wgml_tensor *out)
{
    if (!x || !before || !after)
        return wg_pad_impl(x, before, after, mode, value, out);
    call c = {.op = WG_OP_PAD, .p = {.sub = (int)mode, .value = value}, .in = {x}, .nin = 1, .out = out};
    for (int i = 0; i < x->ndim; i++)
        c.p.a[i] = before[i], c.p.b[i] = after[i];
    return run(&c);
}

wgml_status wgml_flip(const wgml_tensor *x, unsigned axes_mask, wgml_tensor *out)
{
    call c = {.op = WG_OP_FLIP, .p = {.mask = axes_mask}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

wgml_status wgml_roll(const wgml_tensor *x, const int64_t *shifts, wgml_tensor *out)
{
    if (!x || !shifts)
        return wg_roll_impl(x, shifts, out);
    call c = {.op = WG_OP_ROLL, .in = {x}, .nin = 1, .out = out};
    for (int i = 0; i < x->ndim; i++)
        c.p.a[i] = shifts[i];
    return run(&c);
}

wgml_status wgml_tri(const wgml_tensor *x, int upper, int64_t k, wgml_tensor *out)
{
    call c = {.op = WG_OP_TRI, .p = {.flag = upper, .k = k}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

wgml_status wgml_diag(const wgml_tensor *x, wgml_tensor *out)
{
    call c = {.op = WG_OP_DIAG, .p = {.flag = x && out && out->ndim > x->ndim}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

/* ------------------------------------------------------------ indexing */

wgml_status wgml_get_rows(const wgml_tensor *src, const wgml_tensor *idx, wgml_tensor *out)
{
    call c = {.op = WG_OP_GET_ROWS, .p = {.dtype = out ? out->dtype : WGML_F32}, .in = {src, idx}, .nin = 2,
              .out = out};
    return run(&c);
}

wgml_status wgml_set_rows(wgml_tensor *dst, const wgml_tensor *idx, const wgml_tensor *src)
{
    call c = {.op = WG_OP_SET_ROWS, .in = {dst, idx, src}, .nin = 3, .out = dst};
    return run(&c);
}

wgml_status wgml_gather(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out)
{
    call c = {.op = WG_OP_GATHER, .p = {.axis = axis}, .in = {src, idx}, .nin = 2, .out = out};
    return run(&c);
}

wgml_status wgml_scatter_add(wgml_tensor *dst, int axis, const wgml_tensor *idx, const wgml_tensor *src)
{
    call c = {.op = WG_OP_SCATTER_ADD, .p = {.axis = axis}, .in = {dst, idx, src}, .nin = 3, .out = dst};
    return run(&c);
}

wgml_status wgml_index_select(const wgml_tensor *src, int axis, const wgml_tensor *idx, wgml_tensor *out)
{
    call c = {.op = WG_OP_INDEX_SELECT, .p = {.axis = axis}, .in = {src, idx}, .nin = 2, .out = out};
    return run(&c);
}

wgml_status wgml_one_hot(const wgml_tensor *idx, wgml_tensor *out)
{
    call c = {.op = WG_OP_ONE_HOT, .in = {idx}, .nin = 1, .out = out};
    if (!out || out->ndim < 1)
        return wg_one_hot_impl(idx, out);
    c.p.dtype = out->dtype;
    c.p.shape[0] = out->shape[out->ndim - 1];
    return run(&c);
}

wgml_status wgml_embedding(const wgml_tensor *table, const wgml_tensor *ids, wgml_tensor *out)
{
    call c = {.op = WG_OP_EMBEDDING, .p = {.dtype = out ? out->dtype : WGML_F32}, .in = {table, ids}, .nin = 2,
              .out = out};
    return run(&c);
}

wgml_status wgml_dequantize(const wgml_tensor *x, wgml_tensor *out)
{
    call c = {.op = WG_OP_DEQUANTIZE, .p = {.dtype = out ? out->dtype : WGML_F32}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

/* ------------------------------------------------------------ reductions */

wgml_status wgml_reduce(wgml_reduce_op op, const wgml_tensor *x, unsigned axes_mask, float p0, wgml_tensor *out)
{
    call c = {.op = WG_OP_REDUCE, .p = {.sub = (int)op, .mask = axes_mask, .f = {p0, 0}}, .in = {x}, .nin = 1,
              .out = out};
    return run(&c);
}

wgml_status wgml_cumsum(const wgml_tensor *x, int axis, int exclusive, wgml_tensor *out)
{
    call c = {.op = WG_OP_CUMSUM, .p = {.axis = axis, .flag = exclusive}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

wgml_status wgml_argsort(const wgml_tensor *x, int descending, wgml_tensor *out)
{
    call c = {.op = WG_OP_ARGSORT, .p = {.flag = descending}, .in = {x}, .nin = 1, .out = out};
    return run(&c);
}

static wgml_status top_k_both(const call *c)
{
    return wg_top_k_impl(c->in[0], c->p.k, c->p.flag ? NULL : c->out, c->p.flag ? c->out : c->out2);
}

wgml_status wgml_top_k(const wgml_tensor *x, int64_t k, wgml_tensor *values, wgml_tensor *indices)
{
    /* values and indices: the check runs for each (out, then out2). */
    call c = {.op = WG_OP_TOP_K, .p = {.k = k, .flag = values ? 0 : 1}, .in = {x}, .nin = 1,
              .out = values ? values : indices, .out2 = values ? indices : NULL, .impl = top_k_both};
    if (!values && !indices)
        return wg_top_k_impl(x, k, values, indices);
    return run(&c);
}

/* ------------------------------------------------------------ rows */

wgml_status wgml_softmax(const wgml_tensor *x, const wgml_tensor *mask, const wgml_tensor *sinks,
                         const wgml_softmax_params *p, wgml_tensor *out)
{
    call c = {.op = WG_OP_SOFTMAX, .p = {.softmax = {-1, 1, 0, 0}}, .in = {x, mask, sinks}, .nin = 3, .out = out,
              .any_float_out = true};
    if (p)
        c.p.softmax = *p;
    return run(&c);
}

/* The caller's params, batch norm's mean and var included. */
static wgml_status norm_direct(const call *c) { return wg_norm_impl(c->in[0], &c->p.norm, c->out); }

wgml_status wgml_norm(const wgml_tensor *x, const wgml_norm_params *p, wgml_tensor *out)
{
    if (!p)
        return wg_norm_impl(x, p, out);
    call c = {.op = WG_OP_NORM, .p = {.norm = *p}, .in = {x, p->weight, p->bias, p->residual}, .nin = 4, .out = out,
              .out2 = p->sum_out, .any_float_out = true, .impl = norm_direct};
    return run(&c);
}

wgml_status wgml_rope(const wgml_tensor *x, const wgml_tensor *pos, const wgml_rope_params *p, wgml_tensor *out)
{
    if (!p)
        return wg_rope_impl(x, pos, p, out);
    call c = {.op = WG_OP_ROPE, .p = {.rope = *p}, .in = {x, pos, p->freq_factors}, .nin = 3, .out = out};
    return run(&c);
}

wgml_status wgml_glu(wgml_glu_kind kind, const wgml_tensor *x, const wgml_tensor *gate, int swapped,
                     wgml_tensor *out)
{
    call c = {.op = WG_OP_GLU, .p = {.sub = (int)kind, .flag = swapped}, .in = {x, gate}, .nin = 2, .out = out};
    return run(&c);
}

wgml_status wgml_sample_seeded(const wgml_tensor *logits, const wgml_tensor *seed, const wgml_sample_params *p,
                               wgml_tensor *out)
{
    if (!p)
        return wg_sample_impl(logits, seed, p, out);
    call c = {.op = WG_OP_SAMPLE, .p = {.sample = *p}, .in = {logits, seed}, .nin = 2, .out = out};
    return run(&c);
}

wgml_status wgml_sample(const wgml_tensor *logits, const wgml_sample_params *p, wgml_tensor *out)
{
    return wgml_sample_seeded(logits, NULL, p, out);
}

/* ------------------------------------------------ matmul and attention */

static wgml_matmul_params mm_params(const wgml_matmul_params *p)
{
    return p ? *p : (wgml_matmul_params){1.0f, 0.0f, WGML_ACT_NONE, WGML_PREC_F32};
}

wgml_status wgml_matmul(const wgml_tensor *a, const wgml_tensor *b, const wgml_tensor *bias,
                        const wgml_matmul_params *p, wgml_tensor *out)
{
    call c = {.op = WG_OP_MATMUL, .p = {.mm = mm_params(p), .dtype = out ? out->dtype : WGML_F32},
              .in = {a, b, bias}, .nin = 4, .out = out};
    c.in[3] = c.p.mm.beta != 0.0f ? out : NULL; /* beta 0: out is never read */
    return run(&c);
}

wgml_status wgml_linear(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *bias,
                        const wgml_matmul_params *p, wgml_tensor *out)
{
    call c = {.op = WG_OP_LINEAR, .p = {.mm = mm_params(p), .dtype = out ? out->dtype : WGML_F32},
              .in = {x, w, bias}, .nin = 4, .out = out};
    c.in[3] = c.p.mm.beta != 0.0f ? out : NULL;
    return run(&c);
}

wgml_status wgml_linear_id(const wgml_tensor *x, const wgml_tensor *w, const wgml_tensor *ids, wgml_tensor *out)
{
    call c = {.op = WG_OP_LINEAR_ID, .p = {.dtype = out ? out->dtype : WGML_F32}, .in = {x, w, ids}, .nin = 3,
              .out = out};
    return run(&c);
}

wgml_status wgml_attention(const wgml_tensor *q, const wgml_tensor *k, const wgml_tensor *v,
                           const wgml_tensor *mask, const wgml_tensor *sinks, const wgml_attn_params *p,
                           wgml_tensor *out)
{
    call c = {.op = WG_OP_ATTENTION, .p = {.dtype = out ? out->dtype : WGML_F32}, .in = {q, k, v, mask, sinks},
              .nin = 5, .out = out};
    if (p)
        c.p.attn = *p;
    return run(&c);
}
