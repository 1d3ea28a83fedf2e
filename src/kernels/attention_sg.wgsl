// Lane groups that must share a subgroup (included by attention_dsg.wgsl
// and attention_fa.wgsl; GPUs with subgroups only).  A subgroup takes a
// slot from a workgroup counter and its groups number from there, so a
// group's lanes share a subgroup however the device lays subgroups over
// the workgroup's invocations.
var<workgroup> sg_slots: atomic<u32>;

// This lane's group of `per` consecutive subgroup lanes (per divides the
// subgroup size), numbered across the workgroup.  Has a workgroup barrier:
// call it in uniform control flow.
fn sg_group(li: u32, lane: u32, sgs: u32, per: u32) -> u32 {
    if (li == 0u) {
        atomicStore(&sg_slots, 0u);
    }
    workgroupBarrier();
    var slot = 0u;
    if (lane == 0u) {
        slot = atomicAdd(&sg_slots, 1u);
    }
    return subgroupBroadcastFirst(slot) * (sgs / per) + lane / per;
}
