/* RoPE, GLU and sampling families: registry rows and the CPU references the
 * tests check the kernels against. */
#ifndef WGML_ROPE_H
#define WGML_ROPE_H

#include "ops.h"

/* ------------------------------------------------------------ rope */

/* x [B, S, H, D] contiguous (doubles), pos as wgml_rope takes it (S, or 4*S
 * for M-RoPE), ff NULL or [n_dims/2].  Writes out [B, S, H, D]; when
 * theta is not NULL, theta[e] = |angle| that rotated element e (0 for
 * copied elements), which tests use to scale their tolerance. */
void wg_rope_ref(const wgml_rope_params *p, const int64_t shape[4], const double *x, const int32_t *pos,
                 const double *ff, double *out, double *theta);
wg_op_table wg_rope_ops(void);
/* The rope kernels' angle constants for p (rope_fns.wgsl's f0 and f1:
 * k_hi, k_lo, freq_scale, ext_factor; corr_lo, corr_hi, mscale, 0), with
 * wgml_rope's checks of p's values (n_dims must already be checked). */
wgml_status wg_rope_gpu_consts(const wgml_rope_params *p, float f0[4], float f1[4]);

/* ------------------------------------------------------------ glu */

const char *wg_glu_name(wgml_glu_kind k);
double wg_glu_ref(wgml_glu_kind k, double a, double g);
wg_op_table wg_glu_ops(void);

/* ------------------------------------------------------------ sample */

/* The kernel's random stream: 32 bits for (seed, row, draw counter). */
uint32_t wg_sample_bits(uint64_t seed, uint64_t row, uint32_t counter);
/* The seed a draw uses: params.seed plus the seed tensor's first element
 * (its bits; i32 sign-extended), mod 2^64.  wg_sample_ref takes the sum
 * as p->seed. */
uint64_t wg_sample_seed_add(uint64_t seed, uint32_t bits, bool is_i32);
/* One row (logit values as the kernel reads them) sampled with wgml_sample's
 * rules in double.  *margin (may be NULL) receives how close the row came
 * to a decision boundary, relative to the kept mass: the top-p cut or the
 * categorical draw; f32 rounding on the GPU may flip rows whose margin is
 * within its accumulated error. */
int32_t wg_sample_ref(const double *logits, int64_t vocab, const wgml_sample_params *p, uint64_t row,
                      double *margin);
wg_op_table wg_sample_ops(void);

#endif
