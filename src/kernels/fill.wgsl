// Byte-range fill with a 4-byte pattern.  Words fully inside [lo, hi) are
// stored whole; the (at most two) partial words at the ends merge the
// pattern under a byte mask, so any byte offset and size works.  Uploads use
// the same kernel for their unaligned head and tail bytes.
#include "prelude.wgsl"

struct Params {
    first_word: u32,  // first word touched, relative to the binding
    n_words: u32,     // words touched
    lo: u32,          // first byte, relative to the binding
    hi: u32,          // one past the last byte
    pattern: u32,     // byte (addr % 4) of pattern goes to byte addr
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;

const WG: u32 = 256u;
const PER_THREAD: u32 = 4u;

@compute @workgroup_size(256)
fn fill(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
    let base = wg_linear(wid, nwg) * (WG * PER_THREAD) + li;
    for (var j = 0u; j < PER_THREAD; j++) {
        let i = base + j * WG;
        if (i >= p.n_words) {
            return;
        }
        let w = p.first_word + i;
        let b0 = w * 4u;
        if (b0 >= p.lo && b0 + 4u <= p.hi) {
            dst[w] = p.pattern;
        } else {
            var m = 0u;
            for (var k = 0u; k < 4u; k++) {
                let a = b0 + k;
                if (a >= p.lo && a < p.hi) {
                    m |= 0xffu << (8u * k);
                }
            }
            dst[w] = (dst[w] & ~m) | (p.pattern & m);
        }
    }
}
