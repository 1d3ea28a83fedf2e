/*
 * STUB (scaffolding for issue 9): replaced by the family's implementation.
 */
#include "mm.h"

wgml_status wg_ck_attention(const wg_op_params *p, const wg_desc *const *in, int nin, wg_desc *out)
{
    (void)p, (void)in, (void)nin, (void)out;
    return wg_fail(WGML_ERR_UNSUPPORTED, "attention: not built yet");
}
uint64_t wg_sc_attention(const wg_op_params *p, const wg_desc *const *in, int nin, const wg_desc *out)
{
    (void)p, (void)in, (void)nin, (void)out;
    return 0;
}
wgml_status wg_en_attention(const wg_op_params *p, const wgml_tensor *const *in, int nin, wgml_tensor *out, wgml_tensor *out2)
{
    (void)p, (void)in, (void)nin, (void)out, (void)out2;
    return wg_fail(WGML_ERR_UNSUPPORTED, "attention: not built yet");
}

wg_op_table wg_attention_ops(void) { return (wg_op_table){NULL, 0}; }
