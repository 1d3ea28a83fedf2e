/*
 * Elementwise family: unary, binary (numpy broadcasting), where, fill,
 * cast and strided copy.  Kernels: ew_unary.wgsl, ew_binary.wgsl,
 * ew_cast.wgsl, all through wg_ew_launch.  CPU references: *_ref below.
 */
#include "elementwise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ names */

static const char *unary_names[WGML_UNARY_COUNT] = {
    "ABS", "NEG", "SIGN", "EXP", "EXPM1", "LOG", "LOG1P", "SQRT", "RSQRT", "SQR", "SIN", "COS",
    "TANH", "SIGMOID", "RELU", "LEAKY_RELU", "ELU", "SELU", "GELU_ERF", "GELU_TANH", "GELU_QUICK",
    "SILU", "SOFTPLUS", "MISH", "HARDSWISH", "HARDSIGMOID", "STEP", "CLAMP", "FLOOR", "CEIL",
    "ROUND", "TRUNC", "RECIPROCAL", "ERF", "SCALE", "NOT",
};
static const char *binary_names[WGML_BINARY_COUNT] = {
    "ADD", "SUB", "MUL", "DIV", "POW", "MAX", "MIN", "MOD", "AND", "OR", "XOR",
    "EQ", "NE", "LT", "LE", "GT", "GE",
};

const char *wg_unary_name(wgml_unary_op op) { return (unsigned)op < WGML_UNARY_COUNT ? unary_names[op] : "?"; }
const char *wg_binary_name(wgml_binary_op op) { return (unsigned)op < WGML_BINARY_COUNT ? binary_names[op] : "?"; }

/* ------------------------------------------------------------ dtype rules */

uint32_t wg_unary_dtypes(wgml_unary_op op)
{
    uint32_t sint = WG_DT_BIT(WGML_I32) | WG_DT_BIT(WGML_I8);
    switch (op) {
    case WGML_ABS: case WGML_NEG: case WGML_SIGN: case WGML_SQR: case WGML_RELU: case WGML_CLAMP: case WGML_SCALE:
        return WG_DT_FLOATS | sint;
    case WGML_NOT:
        return WG_DT_INTS | WG_DT_BIT(WGML_BOOL);
    default:
        return WG_DT_FLOATS;
    }
}

uint32_t wg_binary_dtypes(wgml_binary_op op)
{
    if (op == WGML_AND || op == WGML_OR || op == WGML_XOR)
        return WG_DT_INTS | WG_DT_BIT(WGML_BOOL);
    if (op >= WGML_EQ)
        return WG_DT_PLAIN;
    return WG_DT_FLOATS | WG_DT_INTS;
}

static const char *kind_defines(wgml_dtype t)
{
    switch (wg_dtype(t)->kind) {
    case WG_KIND_FLOAT: return "FLOAT";
    case WG_KIND_INT: return "SIGNED";
    case WG_KIND_BOOL: return "BOOL";
    default: return "UNSIGNED";
    }
}

/* float -> i32 as wgml_cast converts: truncate, saturate, NaN -> 0 (also
 * how integer CLAMP takes its float bounds) */
static int32_t f32_to_i32_sat(float v)
{
    if (isnan(v))
        return 0;
    double t = trunc((double)v);
    return t <= -2147483648.0 ? INT32_MIN : t >= 2147483647.0 ? INT32_MAX : (int32_t)t;
}

/* an integer dtype's range as WGSL literals, for saturating conversions */
static void int_bounds(wgml_dtype t, char *lo, char *hi, size_t n)
{
    switch (t) {
    case WGML_I32: snprintf(lo, n, "-2147483648"); snprintf(hi, n, "2147483647"); break;
    case WGML_U32: snprintf(lo, n, "0u"); snprintf(hi, n, "4294967295u"); break;
    case WGML_I8: snprintf(lo, n, "-128"); snprintf(hi, n, "127"); break;
    default: snprintf(lo, n, "0u"); snprintf(hi, n, "255u"); break;
    }
}

static wgml_status need_plain(const char *op, const wgml_tensor *t, uint32_t allowed)
{
    if (!(allowed & WG_DT_BIT(t->dtype)))
        return wg_fail(WGML_ERR_DTYPE, "%s: dtype %s is not supported", op, wgml_dtype_name(t->dtype));
    return WGML_OK;
}

/* ------------------------------------------------------------ unary */

/* A float literal that WGSL reads back bit for bit. */
static int f32_literal(char *buf, size_t n, float v)
{
    if (v == 0 && !signbit(v))
        return snprintf(buf, n, "0.0");
    uint32_t u;
    memcpy(&u, &v, 4);
    return snprintf(buf, n, "bitcast<f32>(0x%08xu)", u);
}

wgml_status wg_unary_chain(const wgml_unary_op *ops, const float (*prm)[2], int n, const wgml_tensor *x,
                           wgml_tensor *out)
{
    const char *name = "unary chain";
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if (n < 1 || n > WG_CHAIN_MAX)
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: %d ops (1..%d)", name, n, WG_CHAIN_MAX);
    if (!wg_dtype_is_float(x->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: x is %s; chains are float only", name, wgml_dtype_name(x->dtype));
    for (int i = 0; i < n; i++)
        if ((unsigned)ops[i] >= WGML_UNARY_COUNT || ops[i] == WGML_NOT)
            return wg_fail(WGML_ERR_INVALID_ARG, "%s: op %d is not a float unary op", name, (int)ops[i]);
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    if ((st = wg_check_writes(name, "out", out, true, "x", x, WG_END)) != WGML_OK)
        return st;
    /* CHAIN = u_OPn(...u_OP1(x, p0, p1)..., p0, p1); no ';' may appear in
     * a define's value, and none does. */
    char expr[640] = "x", tmp[720], defs[1024];
    int dn = snprintf(defs, sizeof defs, "FLOAT;VEC4OK");
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
        char a[40], b[40];
        f32_literal(a, sizeof a, prm[i][0]);
        f32_literal(b, sizeof b, prm[i][1]);
        int w = snprintf(tmp, sizeof tmp, "u_%s(%s, %s, %s)", wg_unary_name(ops[i]), expr, a, b);
        if (w < 0 || (size_t)w >= sizeof expr) /* 6 ops of at most ~100 characters each fit */
            return wg_fail(WGML_ERR_INTERNAL, "%s: the chain's expression is too long", name);
        memcpy(expr, tmp, sizeof expr);
        if (!(seen >> ops[i] & 1))
            dn += snprintf(defs + dn, sizeof defs - (size_t)dn, ";U_%s", wg_unary_name(ops[i]));
        seen |= 1ull << ops[i];
    }
    snprintf(defs + dn, sizeof defs - (size_t)dn, ";CHAIN=%s", expr);
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand o[2] = {{x, wg_view4_of(x), "a", false}, {out, wg_view4_of(out), "o", true}};
    return wg_ew_launch(x->ctx, "ew_unary.wgsl", "ew_main", defs, o, 2, iter, NULL, NULL);
}

wgml_status wg_unary_impl(wgml_unary_op op, const wgml_tensor *x, wgml_tensor *out, float p0, float p1)
{
    char name[48];
    snprintf(name, sizeof name, "wgml_unary(%s)", wg_unary_name(op));
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if ((unsigned)op >= WGML_UNARY_COUNT)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_unary: unknown op %d", (int)op);
    if ((st = need_plain(name, x, wg_unary_dtypes(op))) != WGML_OK)
        return st;
    if ((st = wg_check_out(name, out, x->dtype, x->ndim, x->shape)) != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    /* Elementwise: each invocation reads its element before writing it, so
     * out may be the same view as an input (in place), never a shifted one. */
    if ((st = wg_check_writes(name, "out", out, true, "x", x, WG_END)) != WGML_OK)
        return st;
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand ops[2] = {{x, wg_view4_of(x), "a", false}, {out, wg_view4_of(out), "o", true}};
    char defs[160];
    int dn = snprintf(defs, sizeof defs, "OP_%s;%s;VEC4OK", wg_unary_name(op), kind_defines(x->dtype));
    if (wg_dtype_is_float(x->dtype)) /* the op's function in ew_unary_fns.wgsl */
        dn += snprintf(defs + dn, sizeof defs - (size_t)dn, ";UOP=%s;U_%s", wg_unary_name(op), wg_unary_name(op));
    if (op == WGML_SCALE && !wg_dtype_is_float(x->dtype)) { /* saturates to the dtype's range */
        char lo[16], hi[16];
        int_bounds(x->dtype, lo, hi, sizeof lo);
        snprintf(defs + dn, sizeof defs - (size_t)dn, ";O_MIN=%s;O_MAX=%s", lo, hi);
    }
    float fp[4] = {p0, p1, 0, 0};
    /* integer CLAMP bounds convert like casts (a plain C cast of an
     * out-of-range float is undefined) */
    uint32_t ip[4] = {(uint32_t)f32_to_i32_sat(p0), (uint32_t)f32_to_i32_sat(p1), 0, 0};
    return wg_ew_launch(x->ctx, "ew_unary.wgsl", "ew_main", defs, ops, 2, iter, fp, ip);
}

static double erf_ref(double x) { return erf(x); }

double wg_wrap_int(double v, wgml_dtype t)
{
    int kind = wg_dtype(t)->kind;
    if (kind != WG_KIND_INT && kind != WG_KIND_UINT)
        return v;
    int bits = (int)wg_dtype(t)->block_bytes * 8;
    uint64_t m = bits == 32 ? 0xffffffffull : ((1ull << bits) - 1);
    uint64_t u = (uint64_t)(int64_t)v & m;
    if (kind == WG_KIND_INT && (u >> (bits - 1)) & 1)
        return (double)(int64_t)(u | ~m);
    return (double)u;
}

/* The references are written in forms that stay accurate in double in
 * both tails (the tests hold the kernels to relative accuracy there) and
 * give the limits wgml.h promises at +-inf, not inf * 0 = NaN. */
static double sigmoid_ref(double z) { return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z)); }

/* m * s where s underflows to 0 for infinite m: the limit, a zero with
 * m's sign (x * sigmoid(x) -> -0 as x -> -inf). */
static double mul_lim(double m, double s) { return s == 0 ? copysign(0.0, m) : m * s; }

static double softplus_ref(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double unary_exact(wgml_unary_op op, double x, double p0, double p1, wgml_dtype t)
{
    bool fl = wg_dtype_is_float(t);
    if (fl && isnan(x))
        return NAN; /* every float op maps NaN to NaN (wgml.h) */
    switch (op) {
    case WGML_ABS: return fabs(x);
    case WGML_NEG: return -x;
    case WGML_SIGN: return x > 0 ? 1 : x < 0 ? -1 : 0;
    case WGML_EXP: return exp(x);
    case WGML_EXPM1: return expm1(x);
    case WGML_LOG: return log(x);
    case WGML_LOG1P: return log1p(x);
    case WGML_SQRT: return sqrt(x);
    case WGML_RSQRT: return 1 / sqrt(x);
    case WGML_SQR: return x * x;
    case WGML_SIN: return sin(x);
    case WGML_COS: return cos(x);
    case WGML_TANH: return tanh(x);
    case WGML_SIGMOID: return sigmoid_ref(x);
    case WGML_RELU: return x > 0 ? x : 0;
    case WGML_LEAKY_RELU: return x > 0 ? x : p0 * x;
    case WGML_ELU: return x > 0 ? x : p0 * expm1(x);
    case WGML_SELU: return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * expm1(x));
    /* x Phi(x) through erfc: 1 + erf(x / sqrt 2) cancels for x << 0 */
    case WGML_GELU_ERF: return mul_lim(0.5 * x, erfc(-x / sqrt(2.0)));
    /* 0.5 x (1 + tanh(u)) = x sigmoid(2u) */
    case WGML_GELU_TANH: return mul_lim(x, sigmoid_ref(2 * 0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case WGML_GELU_QUICK: return mul_lim(x, sigmoid_ref(1.702 * x));
    case WGML_SILU: return mul_lim(x, sigmoid_ref(x));
    case WGML_SOFTPLUS: return softplus_ref(x);
    case WGML_MISH: return mul_lim(x, tanh(softplus_ref(x)));
    case WGML_HARDSWISH: return x <= -3 ? -0.0 : x >= 3 ? x : x * (x + 3) / 6;
    case WGML_HARDSIGMOID: return fmin(fmax((x + 3) / 6, 0), 1);
    case WGML_STEP: return x > 0 ? 1 : 0;
    case WGML_CLAMP:
        return fl ? fmin(fmax(x, p0), p1) : fmin(fmax(x, f32_to_i32_sat((float)p0)), f32_to_i32_sat((float)p1));
    case WGML_FLOOR: return floor(x);
    case WGML_CEIL: return ceil(x);
    case WGML_ROUND: return nearbyint(x); /* default rounding mode: half to even */
    case WGML_TRUNC: return trunc(x);
    case WGML_RECIPROCAL: return 1 / x;
    case WGML_ERF: return erf_ref(x);
    case WGML_SCALE:
        if (!fl) { /* f32 arithmetic, then converted like a cast (wgml.h) */
            float v = (float)((float)x * (float)p0);
            return wg_cast_ref((float)(v + (float)p1), WGML_F32, t);
        }
        return x * p0 + p1;
    case WGML_NOT:
        if (t == WGML_BOOL)
            return x != 0 ? 0 : 1;
        if (t == WGML_U32)
            return (double)(uint32_t)~(uint32_t)x;
        if (t == WGML_U8)
            return (double)(uint8_t)~(uint8_t)x;
        return (double)~(int64_t)x;
    default: return NAN;
    }
}

double wg_unary_ref(wgml_unary_op op, double x, double p0, double p1, wgml_dtype t)
{
    return wg_wrap_int(unary_exact(op, x, p0, p1, t), t); /* integers wrap like the GPU's */
}

/* ------------------------------------------------------------ binary */

wgml_status wg_binary_impl(wgml_binary_op op, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out)
{
    char name[48];
    snprintf(name, sizeof name, "wgml_binary(%s)", wg_binary_name(op));
    wgml_status st = wg_check_tensor(name, "a", a);
    if (st == WGML_OK)
        st = wg_check_tensor(name, "b", b);
    if (st != WGML_OK)
        return st;
    if ((unsigned)op >= WGML_BINARY_COUNT)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_binary: unknown op %d", (int)op);
    if (a->dtype != b->dtype)
        return wg_fail(WGML_ERR_DTYPE, "%s: a is %s but b is %s (cast one first)", name, wgml_dtype_name(a->dtype),
                       wgml_dtype_name(b->dtype));
    if ((st = need_plain(name, a, wg_binary_dtypes(op))) != WGML_OK)
        return st;
    int nd;
    int64_t shape[4];
    if (!wg_broadcast_shapes(a, b, &nd, shape)) {
        char sa[96], sb[96];
        return wg_fail(WGML_ERR_SHAPE, "%s: shapes %s and %s do not broadcast", name, wg_shape_str(a, sa, sizeof sa),
                       wg_shape_str(b, sb, sizeof sb));
    }
    bool cmp = op >= WGML_EQ;
    if ((st = wg_check_out(name, out, cmp ? WGML_BOOL : a->dtype, nd, shape)) != WGML_OK)
        return st;
    if (!wg_same_ctx(a, b) || !wg_same_ctx(a, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    if ((st = wg_check_writes(name, "out", out, true, "a", a, "b", b, WG_END)) != WGML_OK)
        return st;
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand ops[3] = {{a, wg_view4_of(a), "a", false}, {b, wg_view4_of(b), "b", false}, {out, wg_view4_of(out), "o", true}};
    wg_view4_bcast(a, iter, &ops[0].v);
    wg_view4_bcast(b, iter, &ops[1].v);
    char defs[64];
    snprintf(defs, sizeof defs, "OP_%s;%s;VEC4OK%s", wg_binary_name(op), kind_defines(a->dtype), cmp ? ";CMP" : "");
    return wg_ew_launch(a->ctx, "ew_binary.wgsl", "ew_main", defs, ops, 3, iter, NULL, NULL);
}

static double floor_div(double x, double y) { return y == 0 ? 0 : floor(x / y); }

double wg_binary_ref(wgml_binary_op op, double x, double y, wgml_dtype t)
{
    bool fl = wg_dtype_is_float(t);
    bool sgn = wg_dtype(t)->kind == WG_KIND_INT;
    double r;
    switch (op) {
    case WGML_ADD: r = x + y; break;
    case WGML_SUB: r = x - y; break;
    case WGML_MUL: r = x * y; break;
    case WGML_DIV: r = fl ? x / y : floor_div(x, y); break;
    case WGML_POW:
        if (fl) {
            r = pow(x, y);
        } else {
            if (y < 0)
                r = x == 1 ? 1 : x == -1 ? (((int64_t)y & 1) ? -1 : 1) : 0;
            else {
                /* wrapping power in the compute type (32-bit) */
                uint32_t acc = 1, base = (uint32_t)(int64_t)x;
                for (uint32_t e = (uint32_t)(int64_t)y; e; e >>= 1, base *= base)
                    if (e & 1)
                        acc *= base;
                r = sgn ? (double)(int32_t)acc : (double)acc;
            }
        }
        break;
    case WGML_MAX: r = isnan(x) || isnan(y) ? NAN : fmax(x, y); break;
    case WGML_MIN: r = isnan(x) || isnan(y) ? NAN : fmin(x, y); break;
    case WGML_MOD:
        if (!fl && y == 0)
            r = 0;
        else {
            /* numpy's remainder: fmod, moved to the divisor's sign; a
             * zero takes the divisor's sign */
            r = fmod(x, y);
            if (r == 0)
                r = copysign(0.0, y);
            else if ((r < 0) != (y < 0))
                r += y;
        }
        break;
    case WGML_AND: r = (double)((int64_t)x & (int64_t)y); break;
    case WGML_OR: r = (double)((int64_t)x | (int64_t)y); break;
    case WGML_XOR: r = (double)((int64_t)x ^ (int64_t)y); break;
    case WGML_EQ: return x == y;
    case WGML_NE: return x != y;
    case WGML_LT: return x < y;
    case WGML_LE: return x <= y;
    case WGML_GT: return x > y;
    case WGML_GE: return x >= y;
    default: return NAN;
    }
    return wg_wrap_int(r, t); /* integers wrap modulo 2^bits */
}

/* ------------------------------------------------------------ cast, copy */

static const char *kind_tag(wgml_dtype t)
{
    switch (wg_dtype(t)->kind) {
    case WG_KIND_FLOAT: return "FLOAT";
    case WG_KIND_BOOL: return "BOOL";
    default: return "INT";
    }
}

/* A quantised tensor whose rows are contiguous whole blocks, seen as u32
 * words (the same storage: rows of rowbytes / 4 words, every stride and
 * the offset on words); false when a row or a stride is not on 4 bytes. */
static bool as_words(const wgml_tensor *t, wgml_tensor *a)
{
    const wg_dtype_info *d = wg_dtype(t->dtype);
    int last = t->ndim - 1;
    if (t->ndim < 1 || (t->shape[last] > 1 && t->strides[last] != 1) || t->shape[last] % d->block_elems ||
        t->offset % 4)
        return false;
    *a = *t;
    a->dtype = WGML_U32;
    uint64_t rowb = (uint64_t)t->shape[last] / d->block_elems * d->block_bytes;
    if (rowb % 4)
        return false;
    a->shape[last] = (int64_t)(rowb / 4);
    a->strides[last] = 1;
    for (int i = 0; i < last; i++) {
        if (t->strides[i] % d->block_elems)
            return false;
        uint64_t b = (uint64_t)t->strides[i] / d->block_elems * d->block_bytes;
        if (b % 4)
            return false;
        a->strides[i] = (int64_t)(b / 4);
    }
    return true;
}

static wgml_status cast_impl(const char *name, const wgml_tensor *x, wgml_tensor *out)
{
    wgml_status st = wg_check_tensor(name, "x", x);
    if (st != WGML_OK)
        return st;
    if ((st = wg_check_out(name, out, -1, x->ndim, x->shape)) != WGML_OK)
        return st;
    if (!wg_same_ctx(x, out))
        return wg_fail(WGML_ERR_INVALID_ARG, "%s: tensors from different contexts", name);
    if ((st = wg_check_writes(name, "out", out, true, "x", x, WG_END)) != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(x->dtype) || !wg_dtype_is_plain(out->dtype)) {
        if (x->dtype == out->dtype && wgml_tensor_is_contiguous(x) && wgml_tensor_is_contiguous(out))
            return wgml_buffer_copy(out->st->buf, out->offset, x->st->buf, x->offset, wgml_tensor_nbytes(x));
        /* rows of whole blocks at any row strides: copied as u32 words (a
         * model's gate and up rows interleaved, src/models/llm_graph.c) */
        wgml_tensor xw, ow;
        if (x->dtype == out->dtype && as_words(x, &xw) && as_words(out, &ow))
            return cast_impl(name, &xw, &ow);
        return wg_fail(WGML_ERR_DTYPE, "%s: %s -> %s: quantised tensors convert with wgml_dequantize", name,
                       wgml_dtype_name(x->dtype), wgml_dtype_name(out->dtype));
    }
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand ops[2] = {{x, wg_view4_of(x), "a", false}, {out, wg_view4_of(out), "o", true}};
    char lo[16], hi[16], defs[160];
    int_bounds(out->dtype, lo, hi, sizeof lo);
    snprintf(defs, sizeof defs, "CAST;A_%s;O_%s;O_MIN=%s;O_MAX=%s;VEC4OK", kind_tag(x->dtype), kind_tag(out->dtype),
             lo, hi);
    return wg_ew_launch(x->ctx, "ew_cast.wgsl", "ew_main", defs, ops, 2, iter, NULL, NULL);
}

wgml_status wg_cast_impl(const wgml_tensor *x, wgml_tensor *out) { return cast_impl("wgml_cast", x, out); }

wgml_status wg_copy_impl(const wgml_tensor *x, wgml_tensor *out)
{
    if (x && out && x->dtype != out->dtype)
        return wg_fail(WGML_ERR_DTYPE, "wgml_copy: %s -> %s (use wgml_cast to convert)", wgml_dtype_name(x->dtype),
                       wgml_dtype_name(out->dtype));
    return cast_impl("wgml_copy", x, out);
}

double wg_cast_ref(double x, wgml_dtype from, wgml_dtype to)
{
    /* integer -> integer wraps; float -> integer saturates (wg_host_set) */
    int k = wg_dtype(to)->kind;
    if ((k == WG_KIND_INT || k == WG_KIND_UINT) && !wg_dtype_is_float(from))
        return wg_wrap_int(x, to);
    uint8_t buf[8];
    wg_host_set(to, buf, 0, x);
    return wg_host_get(to, buf, 0);
}

/* ------------------------------------------------------------ fill, where */

wgml_status wg_fill_impl(wgml_tensor *out, double value)
{
    wgml_status st = wg_check_tensor("wgml_fill", "out", out);
    if (st != WGML_OK)
        return st;
    if (!wg_dtype_is_plain(out->dtype))
        return wg_fail(WGML_ERR_DTYPE, "wgml_fill: quantised dtype %s", wgml_dtype_name(out->dtype));
    if ((st = wg_check_out_writable("wgml_fill", "out", out)) != WGML_OK)
        return st;
    uint32_t bits = wg_value_bits(out->dtype, value);
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand ops[1] = {{out, wg_view4_of(out), "o", true}};
    uint32_t ip[4] = {bits, 0, 0, 0};
    return wg_ew_launch(out->ctx, "ew_cast.wgsl", "ew_main", "FILL", ops, 1, iter, NULL, ip);
}

wgml_status wg_where_impl(const wgml_tensor *c, const wgml_tensor *a, const wgml_tensor *b, wgml_tensor *out)
{
    const char *name = "wgml_where";
    wgml_status st = wg_check_tensor(name, "cond", c);
    if (st == WGML_OK) st = wg_check_tensor(name, "a", a);
    if (st == WGML_OK) st = wg_check_tensor(name, "b", b);
    if (st != WGML_OK)
        return st;
    if (c->dtype != WGML_BOOL)
        return wg_fail(WGML_ERR_DTYPE, "%s: cond is %s, must be bool", name, wgml_dtype_name(c->dtype));
    if (a->dtype != b->dtype || !wg_dtype_is_plain(a->dtype))
        return wg_fail(WGML_ERR_DTYPE, "%s: a (%s) and b (%s) must share one plain dtype", name,
                       wgml_dtype_name(a->dtype), wgml_dtype_name(b->dtype));
    int nd1, nd;
    int64_t s1[4], shape[4];
    wgml_tensor tmp = {0};
    if (!wg_broadcast_shapes(a, b, &nd1, s1))
        return wg_fail(WGML_ERR_SHAPE, "%s: a and b do not broadcast", name);
    tmp.ndim = nd1;
    memcpy(tmp.shape, s1, sizeof s1);
    if (!wg_broadcast_shapes(&tmp, c, &nd, shape))
        return wg_fail(WGML_ERR_SHAPE, "%s: cond does not broadcast with a and b", name);
    if ((st = wg_check_out(name, out, a->dtype, nd, shape)) != WGML_OK)
        return st;
    if ((st = wg_check_writes(name, "out", out, true, "cond", c, "a", a, "b", b, WG_END)) != WGML_OK)
        return st;
    int64_t iter[4];
    wg_shape4(out, iter);
    wg_operand ops[4] = {{c, wg_view4_of(c), "c", false}, {a, wg_view4_of(a), "a", false}, {b, wg_view4_of(b), "b", false},
                         {out, wg_view4_of(out), "o", true}};
    wg_view4_bcast(c, iter, &ops[0].v);
    wg_view4_bcast(a, iter, &ops[1].v);
    wg_view4_bcast(b, iter, &ops[2].v);
    return wg_ew_launch(a->ctx, "ew_cast.wgsl", "ew_main", "WHERE", ops, 4, iter, NULL, NULL);
}

/* ------------------------------------------------------------ registry */

static wgml_op_info rows[WGML_UNARY_COUNT + WGML_BINARY_COUNT + 4];

wg_op_table wg_elementwise_ops(void)
{
    size_t n = 0;
    for (int i = 0; i < WGML_UNARY_COUNT; i++)
        rows[n++] = (wgml_op_info){unary_names[i], "unary", wg_unary_dtypes((wgml_unary_op)i)};
    for (int i = 0; i < WGML_BINARY_COUNT; i++)
        rows[n++] = (wgml_op_info){binary_names[i], "binary", wg_binary_dtypes((wgml_binary_op)i)};
    rows[n++] = (wgml_op_info){"WHERE", "elementwise", WG_DT_PLAIN};
    rows[n++] = (wgml_op_info){"FILL", "elementwise", WG_DT_PLAIN};
    rows[n++] = (wgml_op_info){"CAST", "movement", WG_DT_PLAIN};
    rows[n++] = (wgml_op_info){"COPY", "movement", WG_DT_PLAIN};
    return (wg_op_table){rows, n};
}
