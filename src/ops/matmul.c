/*
 * STUB (scaffolding for issue 9): replaced by the family's implementation.
 */
#include "mm.h"

wgml_status wg_ck_matmul(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    (void)p, (void)in, (void)nin, (void)out;
    return wg_fail(WGML_ERR_UNSUPPORTED, "matmul: not built yet");
}
uint64_t wg_sc_matmul(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)in, (void)nin, (void)out;
    return 0;
}
wgml_status wg_en_matmul(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    (void)p, (void)in, (void)nin, (void)out, (void)out2;
    return wg_fail(WGML_ERR_UNSUPPORTED, "matmul: not built yet");
}

wgml_status wg_ck_linear(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    (void)p, (void)in, (void)nin, (void)out;
    return wg_fail(WGML_ERR_UNSUPPORTED, "linear: not built yet");
}
uint64_t wg_sc_linear(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)in, (void)nin, (void)out;
    return 0;
}
wgml_status wg_en_linear(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    (void)p, (void)in, (void)nin, (void)out, (void)out2;
    return wg_fail(WGML_ERR_UNSUPPORTED, "linear: not built yet");
}

wg_op_table wg_matmul_ops(void) { return (wg_op_table){NULL, 0}; }
