// K and V bound as raw words in 16-byte vectors (KRAW, VRAW, modes r4 /
// rw4): their dtype kinds, octet loads (8 elements: one 16-byte load of
// f16, two of f32, where the layout allows it, else element by element)
// and the octets' f32 conversion.  Included by attention_decode.wgsl (the
// decode kernels) and attention_fa.wgsl (the register-tiled prefill).

const F_KVEC: u32 = 1024u;   // K octets are whole aligned 16-byte vectors
const F_VVEC: u32 = 2048u;   // V octets are

// K / V dtype: constants on GPUs (one kernel per dtype: f16 octets then
// take 4 registers, not 8); on CPU drivers p.ss.w's bits 0-1 and 2-3, so
// one compiled kernel serves every K/V dtype (lavapipe compiles each
// decode kernel in ~1-2 s).
const KIND_F32: u32 = 0u;
const KIND_F16: u32 = 1u;
const KIND_Q8: u32 = 2u;
fn k_kind() -> u32 {
    return {{K_KIND}};
}
fn v_kind() -> u32 {
    return {{V_KIND}};
}

struct Oct {
    a: vec4<f32>,  // elements 0..3 of the octet
    b: vec4<f32>,  // 4..7
}
// An octet as loaded: f16 packed in pairs in .a (one 16-byte load), else
// f32 bits in .a and .b.  Kept raw until used: half the registers of f32.
struct Raw {
    a: vec4<u32>,
    b: vec4<u32>,
}


fn kv_word(v: bool, w: u32) -> u32 {
    if (v) {
        return v_ld(w);
    }
    return k_ld(w);
}
fn kv_vec(v: bool, i: u32) -> vec4<u32> {
    if (v) {
        return v_ld4(i);
    }
    return k_ld4(i);
}
fn kv_q8(v: bool, e: u32) -> f32 {
    if (v) {
        return v_q8(e);
    }
    return k_q8(e);
}

#ifndef DSG
// Octet of K (v false) or V (v true): elements e, e + st, ... (n of them,
// zeros after; n = 0: no load) from byte `base`, the binding's first.
fn oct_raw(v: bool, kind: u32, base: u32, e: u32, st: u32, n: u32, vec: bool) -> Raw {
    var r = Raw(vec4<u32>(0u), vec4<u32>(0u));
    if (n == 0u) {
        return r;
    }
    if (vec) {
        if (kind == KIND_F16) {
            r.a = kv_vec(v, (base + 2u * e) >> 4u);
        } else {
            let i = (base + 4u * e) >> 4u;
            r.a = kv_vec(v, i);
            r.b = kv_vec(v, i + 1u);
        }
        return r;
    }
    for (var x = 0u; x < 8u; x++) {
        if (x < n) {
            let el = e + x * st;
            if (kind == KIND_F16) {
                let by = base + 2u * el;
                let h = (kv_word(v, by >> 2u) >> ((by & 2u) * 8u)) & 0xffffu;
                r.a[x / 2u] = r.a[x / 2u] | (h << ((x & 1u) * 16u));
            } else {
                var w = 0u;
                if (kind == KIND_F32) {
                    w = kv_word(v, (base >> 2u) + el);
                } else {
                    w = bitcast<u32>(kv_q8(v, el));
                }
                if (x < 4u) {
                    r.a[x] = w;
                } else {
                    r.b[x - 4u] = w;
                }
            }
        }
    }
    return r;
}

#endif

// f16 -> f32 is exact (unpack2x16float: subnormal halves are normal f32).
fn oct_f32(kind: u32, r: Raw) -> Oct {
    if (kind == KIND_F16) {
        return Oct(vec4<f32>(unpack2x16float(r.a.x), unpack2x16float(r.a.y)),
                   vec4<f32>(unpack2x16float(r.a.z), unpack2x16float(r.a.w)));
    }
    return Oct(bitcast<vec4<f32>>(r.a), bitcast<vec4<f32>>(r.b));
}
