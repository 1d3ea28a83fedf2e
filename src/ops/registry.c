/*
 * The op registry behind wgml_op_get and `wgml ops`: each family file
 * contributes its rows (wg_<family>_ops, declared in ops.h); nothing here
 * is typed by hand.  The references are strong on purpose: libwgml.a is a
 * static archive, and only a strong reference makes the linker pull in a
 * family whose functions the program does not otherwise call.
 */
#include "mm.h"

static wg_op_table (*const families[])(void) = {
    wg_elementwise_ops, wg_movement_ops, wg_indexing_ops, wg_reduce_ops, wg_softmax_ops,
    wg_norm_ops,        wg_rope_ops,     wg_glu_ops,      wg_sample_ops, wg_quant_ops,
    wg_matmul_ops,      wg_matvec_ops,   wg_attention_ops,
};

static const wgml_op_info *row(size_t i, size_t *total)
{
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        wg_op_table t = families[f]();
        if (i < n + t.n && total == NULL)
            return &t.rows[i - n];
        n += t.n;
    }
    if (total)
        *total = n;
    return NULL;
}

size_t wgml_op_count(void)
{
    size_t n = 0;
    row(0, &n);
    return n;
}

const wgml_op_info *wgml_op_get(size_t i) { return row(i, NULL); }
