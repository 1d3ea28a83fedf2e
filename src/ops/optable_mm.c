/*
 * The op table's part-2 rows (matrix products and attention): the same
 * wg_op_def as optable.c, kept here so each family's check, scratch and
 * encode live in its own file (src/ops/mm.h).
 *
 * Inputs: matmul (a, b, bias, c), linear (x, w, bias, c), linear_id
 * (x, w, ids), attention (q, k, v, mask, sinks), linear_pre (a, w, bias,
 * u, g: matvec_pre.c), linear_glu (x, w: linear_glu.c), linear_rope_kv (cache,
 * idx, x, w, pos, ff: linear_rope_kv.c; it updates the cache), linear_norm (x, w, bias, c,
 * g: linear_norm.c; its out2 the norm's output), ffn (x, w_gu, w_down, c, g: ffn.c; its out2 the
 * second product's norm output).  c is the beta operand:
 * the eager call passes out itself, a graph a separate node.
 * Scratch: linear_id's grouped path (moe.c) takes 4 (2 (E + 1) + P +
 * ceil(P / 256) E) bytes for P = tokens x used pairs and E experts (its
 * sort by expert), declared where wg_moe_path takes it.
 */
#include "mm.h"

#include <stdlib.h>
#include <string.h>

#define ROWS(id, nm, lo, hi, ip, up, ck, sc, en) [id - WG_OP_MATMUL] = {nm, lo, hi, ip, up, ck, sc, en}
static const wg_op_def table[] = {
    ROWS(WG_OP_MATMUL, "matmul", 2, 4, false, false, wg_ck_matmul, wg_sc_matmul, wg_en_matmul),
    ROWS(WG_OP_LINEAR, "linear", 2, 4, false, false, wg_ck_linear, wg_sc_linear, wg_en_linear),
    ROWS(WG_OP_LINEAR_ID, "linear_id", 3, 3, false, false, wg_ck_linear_id, wg_sc_linear_id, wg_en_linear_id),
    ROWS(WG_OP_ATTENTION, "attention", 3, 5, false, false, wg_ck_attention, wg_sc_attention, wg_en_attention),
    ROWS(WG_OP_LINEAR_PRE, "linear_pre", 2, 5, false, false, wg_ck_linear_pre, wg_sc_linear_pre, wg_en_linear_pre),
    ROWS(WG_OP_LINEAR_GLU, "linear_glu", 2, 2, false, false, wg_ck_linear_glu, wg_sc_linear_glu, wg_en_linear_glu),
    ROWS(WG_OP_LINEAR_ROPE_KV, "linear_rope_kv", 5, 7, false, true, wg_ck_linear_rope_kv, wg_sc_linear_rope_kv,
         wg_en_linear_rope_kv),
    ROWS(WG_OP_LINEAR_NORM, "linear_norm", 2, 5, false, false, wg_ck_linear_norm, wg_sc_linear_norm,
         wg_en_linear_norm),
    ROWS(WG_OP_FFN, "ffn", 3, 5, false, false, wg_ck_ffn, wg_sc_ffn, wg_en_ffn),
};
_Static_assert(sizeof table / sizeof *table == WG_OP_COUNT - WG_OP_MATMUL,
               "optable_mm.c's rows and enum wg_op are out of step");

const wg_op_def *wg_op_def_mm(int op)
{
    return op >= WG_OP_MATMUL && op < WG_OP_COUNT ? &table[op - WG_OP_MATMUL] : NULL;
}

int wg_forced_path(const char *op, const char *family, const char *p0, const char *p1, bool report)
{
    char buf[32];
    const char *f = wg_forced_variant(family, buf, sizeof buf);
    if (!f)
        return WG_NOT_FORCED;
    if (!strcmp(f, p0) || !strcmp(f, p1))
        return !strcmp(f, p1);
    if (report)
        wg_fail(WGML_ERR_INVALID_ARG, "%s: WGML_FORCE %s=%s is not a variant (variants: %s, %s)", op, family, f, p0, p1);
    return -1;
}

const char *wg_forced_variant(const char *family, char *buf, size_t n)
{
    const char *env = getenv("WGML_FORCE");
    size_t fl = strlen(family);
    for (const char *s = env; s && *s;) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len > fl && !strncmp(s, family, fl) && s[fl] == '=') {
            size_t vl = len - fl - 1;
            if (vl >= n)
                vl = n - 1;
            memcpy(buf, s + fl + 1, vl);
            buf[vl] = 0;
            return buf;
        }
        s = end ? end + 1 : NULL;
    }
    return NULL;
}
