/* IEEE binary16 and bfloat16 <-> f32 on the host, bit-exact with the GPU
 * conversions in src/kernels/dtype.wgsl: round to nearest even, overflow
 * to inf, subnormals kept, NaN stays NaN. */
#ifndef WGML_HALF_H
#define WGML_HALF_H

#include <stdint.h>

float wg_f16_to_f32(uint16_t h);
uint16_t wg_f32_to_f16(float f);
float wg_bf16_to_f32(uint16_t h);
uint16_t wg_f32_to_bf16(float f);

#endif
