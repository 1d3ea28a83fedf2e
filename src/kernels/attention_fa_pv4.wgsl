// Keys c4 .. c4 + 3 of attention_fa.wgsl's P.V product (four blocks of
// attention_fa_pv.wgsl, so the compiler sees the keys written out).
{
    let c = c4;
#include "attention_fa_pv.wgsl"
}
{
    let c = c4 + 1u;
#include "attention_fa_pv.wgsl"
}
{
    let c = c4 + 2u;
#include "attention_fa_pv.wgsl"
}
{
    let c = c4 + 3u;
#include "attention_fa_pv.wgsl"
}
