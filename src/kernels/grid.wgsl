// ---- Grid-wide barriers for persistent kernels (included; the includer
// binds `grid_ctl: array<atomic<u32>>` read_write and launches no more
// workgroups than grid_discover counted for the same pipeline).
//
// Why.  A decode step is a chain of dependent dispatches, and on an H200
// each costs a fixed ~9.5 µs beyond its bytes (bench/NOTES.md 2026-11-27
// (3)): the dispatch, the kernel's ramp and its tail, none of which
// WebGPU lets one dispatch overlap with the next.  Inside one dispatch a
// barrier across workgroups (~2 µs on an H200) replaces the dispatch:
// a probe's decode layer of four q4-sized products ran ~50 µs as one
// persistent chain against 69-87 as its own dispatches (NOTES 2026-11-27
// (7), call 6).  The production kernels' boundaries turned out cheaper:
// the persistent FFN (matvec_pffn.wgsl) ran the 8B decode 1.3% slower
// than its two dispatches (NOTES 2026-11-27 (8)).
//
// Safety.  WebGPU promises nothing about workgroups running at the same
// time, so a barrier among more workgroups than are resident would hang.
// Two guards (after Sorensen et al., "Portable inter-workgroup barrier
// synchronisation for GPUs", OOPSLA 2016):
// - grid_discover, run once per pipeline on a large grid, counts the
//   workgroups that are resident together: the first to arrive keeps a
//   ticket window open until no new workgroup has joined for a while,
//   then closes it; participants stay until the close (so none frees its
//   slot for a latecomer), the rest leave at once.  The host launches at
//   most that many.
// - every wait polls at most GRID_SPIN times; past that it sets the fail
//   word and goes on.  Results are then wrong, but the dispatch ends (a
//   waiting workgroup that gives up lets the missing one run), and the
//   host sees the fail word.  No hang, whatever the driver does.
//
// Memory order: storageBarrier() is a device-scope acquire-release fence
// on storage memory here (naga: OpControlBarrier, memory scope Device);
// data another workgroup wrote in this dispatch is read with atomic loads
// (never a stale L1 line: matvec_ntail.wgsl says the same).
//
// Control words (grid_ctl): arrivals are counted over the whole dispatch
// in GRID_STRIPES counters, each on its own 128-byte line (workgroup g adds
// to stripe g % GRID_STRIPES, so ~nwg / 16 atomics queue on one address);
// barrier b waits until the stripes sum to (b + 1) x nwg, summed by the
// first subgroup.  Measured, the stripes do not pay: 396 workgroups' H200
// barrier took 1.8-1.9 µs on one counter and 2.0-2.1 on 16 (NOTES
// 2026-11-27 (7), calls 1-2; the cost is the fences and two L2 round
// trips).  One counter is the simpler form to return to; every figure
// after call 1 was taken with the stripes.  GC_EXIT counts the
// workgroups past their last wait (the last one sets every counter back to
// 0 for the next dispatch that binds them), GC_FAIL is the fail word (the
// host clears it), GC_DISC / GC_COUNT are grid_discover's window and
// result.  32 x (GRID_STRIPES + 1) words in all.
const GC_EXIT: u32 = 1u;
const GC_FAIL: u32 = 2u;
const GC_DISC: u32 = 3u;
const GC_COUNT: u32 = 4u;
const GRID_STRIPES: u32 = 16u;
const GC_STRIPE0: u32 = 32u;       // stripe i at word 32 (i + 1)
const GRID_SPIN: u32 = 4194304u;    // polls before a wait gives up
const GRID_CLOSED: u32 = 0x80000000u;
// The discovery window: open for at least GRID_MINPOLL polls and until
// GRID_QUIET polls in a row saw no new participant.
const GRID_MINPOLL: u32 = 20000u;
const GRID_QUIET: u32 = 5000u;

// All threads of the workgroup call it (it contains barriers): g is the
// workgroup's index, goal (barriers so far + 1) x the workgroups launched.
fn grid_sync(li: u32, sid: u32, lane: u32, sgs: u32, g: u32, goal: u32) {
    storageBarrier();  // release: this workgroup's stores before its arrival
    if (li == 0u) {
        atomicAdd(&grid_ctl[GC_STRIPE0 * (1u + g % GRID_STRIPES)], 1u);
    }
    if (sid == 0u) {
        // the first subgroup polls: a subgroup-uniform loop
        var it = 0u;
        loop {
            var v = 0u;
            for (var i = lane; i < GRID_STRIPES; i += sgs) {
                v += atomicLoad(&grid_ctl[GC_STRIPE0 * (1u + i)]);
            }
            if (subgroupAdd(v) >= goal) {
                break;
            }
            it += 1u;
            if (it >= GRID_SPIN) {
                atomicStore(&grid_ctl[GC_FAIL], 1u);
                break;
            }
        }
    }
    storageBarrier();  // acquire, and the workgroup waits for its poll
}

// After the workgroup's last grid_sync: the last one out resets the words.
fn grid_exit(li: u32, nwg: u32) {
    if (li == 0u) {
        if (atomicAdd(&grid_ctl[GC_EXIT], 1u) + 1u == nwg) {
            for (var i = 0u; i < GRID_STRIPES; i++) {
                atomicStore(&grid_ctl[GC_STRIPE0 * (1u + i)], 0u);
            }
            atomicStore(&grid_ctl[GC_EXIT], 0u);
        }
    }
}

// Occupancy discovery (GC_DISC 0 before the dispatch; GC_COUNT after it
// holds how many workgroups were resident together).  All threads call it.
fn grid_discover(li: u32) {
    if (li == 0u) {
        var id = 0xffffffffu;
        loop {
            let s = atomicLoad(&grid_ctl[GC_DISC]);
            if ((s & GRID_CLOSED) != 0u) {
                break;
            }
            let r = atomicCompareExchangeWeak(&grid_ctl[GC_DISC], s, s + 1u);
            if (r.exchanged) {
                id = s;
                break;
            }
        }
        if (id == 0u) {
            var last = 1u;
            var quiet = 0u;
            var total = 0u;
            loop {
                let s = atomicLoad(&grid_ctl[GC_DISC]);
                total += 1u;
                if (s != last) {
                    last = s;
                    quiet = 0u;
                } else {
                    quiet += 1u;
                }
                if ((quiet >= GRID_QUIET && total >= GRID_MINPOLL) || total >= GRID_SPIN) {
                    break;
                }
            }
            let fin = atomicOr(&grid_ctl[GC_DISC], GRID_CLOSED);
            atomicStore(&grid_ctl[GC_COUNT], fin & ~GRID_CLOSED);
        } else if (id != 0xffffffffu) {
            // a participant holds its slot until the window closes
            var it = 0u;
            loop {
                if ((atomicLoad(&grid_ctl[GC_DISC]) & GRID_CLOSED) != 0u || it >= GRID_SPIN) {
                    break;
                }
                it += 1u;
            }
        }
    }
    workgroupBarrier();
}
