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

wg_op_table wg_elementwise_ops(void);

#endif
