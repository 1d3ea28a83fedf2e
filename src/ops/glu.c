/*
 * Gated linear units (ggml_glu): out = act(a) * g with act = silu (SWIGLU),
 * gelu with erf (GEGLU_ERF), gelu's tanh approximation (GEGLU_TANH) or relu
 * (REGLU).  Packed form (gate NULL): x [..., 2n] holds [a | g] (swapped:
 * [g | a]) and out is [..., n]; the halves are two strided views of x given
 * to the elementwise launcher, so nothing is copied.  Separate form: a = x,
 * g = gate, both of out's shape (swapped is then ignored).  x, gate and
 * out share one float dtype; the kernel (glu.wgsl) computes in f32.
 */
#include "rope.h"

#include <math.h>
#include <stdio.h>

static const char *glu_names[] = {"SWIGLU", "GEGLU_ERF", "GEGLU_TANH", "REGLU"};
#define GLU_COUNT (sizeof glu_names / sizeof *glu_names)

const char *wg_glu_name(wgml_glu_kind k) { return (unsigned)k < GLU_COUNT ? glu_names[k] : "?"; }

wgml_status wg_glu_impl(wgml_glu_kind kind, const wgml_tensor *x, const wgml_tensor *gate, int swapped,
                     wgml_tensor *out)
{
    char op[40];
    snprintf(op, sizeof op, "wgml_glu(%s)", wg_glu_name(kind));
    wgml_status st = wg_check_tensor(op, "x", x);
    if (st != WGML_OK)
        return st;
    if ((unsigned)kind >= GLU_COUNT)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_glu: unknown kind %d", (int)kind);
    if (!(WG_DT_FLOATS & WG_DT_BIT(x->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: x is %s; f32, f16 and bf16 are supported", op, wgml_dtype_name(x->dtype));
    char s1[96], s2[96];
    int64_t shape[WGML_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = x->shape[i];
    if (gate) {
        if ((st = wg_check_tensor(op, "gate", gate)) != WGML_OK)
            return st;
        if (gate->dtype != x->dtype)
            return wg_fail(WGML_ERR_DTYPE, "%s: gate is %s but x is %s", op, wgml_dtype_name(gate->dtype),
                           wgml_dtype_name(x->dtype));
        bool same = gate->ndim == x->ndim;
        for (int i = 0; same && i < x->ndim; i++)
            same = gate->shape[i] == x->shape[i];
        if (!same)
            return wg_fail(WGML_ERR_SHAPE, "%s: gate %s and x %s must have one shape", op,
                           wg_shape_str(gate, s1, sizeof s1), wg_shape_str(x, s2, sizeof s2));
    } else {
        if (x->ndim == 0 || x->shape[x->ndim - 1] % 2)
            return wg_fail(WGML_ERR_SHAPE, "%s: packed x %s needs an even last dim ([a | g] halves)", op,
                           wg_shape_str(x, s1, sizeof s1));
        shape[x->ndim - 1] /= 2;
    }
    if ((st = wg_check_out(op, out, x->dtype, x->ndim, shape)) != WGML_OK)
        return st;
    if ((st = wg_check_writes(op, "out", out, gate != NULL, "x", x, WG_END)) != WGML_OK ||
        (st = wg_check_writes(op, "out", out, gate != NULL, "gate", gate, WG_END)) != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out) || !wg_same_ctx(x, gate))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", op);
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand ops[3] = {{x, wg_view4_of(x), "a", false}, {x, wg_view4_of(x), "b", false},
                         {out, wg_view4_of(out), "o", true}};
    if (gate) {
        ops[1].t = gate;
        ops[1].v = wg_view4_of(gate);
    } else {
        int64_t n = iter[3];
        wg_view4 *half2 = swapped ? &ops[0].v : &ops[1].v;
        ops[0].v.shape[3] = ops[1].v.shape[3] = n;
        half2->offset += (uint64_t)(n * x->strides[x->ndim - 1]);
    }
    uint32_t ip[4] = {(uint32_t)kind, 0, 0, 0};
    return wg_ew_launch(x->ctx, "glu.wgsl", "glu", NULL, ops, 3, iter, NULL, ip);
}

double wg_glu_ref(wgml_glu_kind k, double a, double g)
{
    switch (k) {
    case WGML_SWIGLU: return a / (1 + exp(-a)) * g;
    case WGML_GEGLU_ERF: return 0.5 * a * (1 + erf(a / sqrt(2.0))) * g;
    case WGML_GEGLU_TANH: return 0.5 * a * (1 + tanh(0.7978845608028654 * (a + 0.044715 * a * a * a))) * g;
    case WGML_REGLU: return (a > 0 || isnan(a) ? a : 0) * g; /* relu(NaN) = NaN */
    default: return NAN;
    }
}

static wgml_op_info glu_rows[GLU_COUNT];

wg_op_table wg_glu_ops(void)
{
    for (size_t i = 0; i < GLU_COUNT; i++)
        glu_rows[i] = (wgml_op_info){glu_names[i], "glu", WG_DT_FLOATS};
    return (wg_op_table){glu_rows, GLU_COUNT};
}
