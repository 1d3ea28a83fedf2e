/* Elementwise family: shared names, dtype rules and CPU references (used by
 * the tests and by other families that compose elementwise steps). */
#ifndef WGML_ELEMENTWISE_H
#define WGML_ELEMENTWISE_H

#include "ops.h"

const char *wg_unary_name(wgml_unary_op op);
const char *wg_binary_name(wgml_binary_op op);
uint32_t wg_unary_dtypes(wgml_unary_op op);
uint32_t wg_binary_dtypes(wgml_binary_op op);

/* Exact (double) results before rounding to the output dtype. */
double wg_unary_ref(wgml_unary_op op, double x, double p0, double p1, wgml_dtype t);
double wg_binary_ref(wgml_binary_op op, double x, double y, wgml_dtype t);
/* x (a value of dtype `from`) converted to `to` (wgml_cast's rules). */
double wg_cast_ref(double x, wgml_dtype from, wgml_dtype to);
/* Integer dtypes: v reduced modulo 2^bits into the type's range. */
double wg_wrap_int(double v, wgml_dtype t);

/* out = op[n-1](... op[0](x)) in one kernel, each op with its (p0, p1),
 * intermediates in f32 (a graph's fused chain; float dtypes, no NOT). */
#define WG_CHAIN_MAX 6
wgml_status wg_unary_chain(const wgml_unary_op *ops, const float (*prm)[2], int n, const wgml_tensor *x,
                           wgml_tensor *out);

wg_op_table wg_elementwise_ops(void);

#endif
