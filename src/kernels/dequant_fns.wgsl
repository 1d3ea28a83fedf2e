// The GGUF block decoders shared by dequant.wgsl (dequantize, quantised
// get_rows) and gemm.wgsl (quantised weights of wgml_linear, decoded while
// tiles load).  The includer declares the raw words `q: array<u32>` (read
// or read_write) and one QT_<type> define; deq(b, j) is element j of the
// block starting at byte b of q.
fn qbyte(a: u32) -> u32 {
    return (q[a >> 2u] >> ((a & 3u) * 8u)) & 0xffu;
}

fn qi8(a: u32) -> f32 {
    return f32(bitcast<i32>(qbyte(a) << 24u) >> 24u);
}

fn qf16(a: u32) -> f32 {
    return wg_f16_to_f32(qbyte(a) | (qbyte(a + 1u) << 8u));
}

fn qu32(a: u32) -> u32 {
    return qbyte(a) | (qbyte(a + 1u) << 8u) | (qbyte(a + 2u) << 16u) | (qbyte(a + 3u) << 24u);
}

// Field of element e (w bits, `group` apart) in the bytes starting at a.
fn qfield(a: u32, e: u32, w: u32, group: u32) -> u32 {
    let per = 8u / w;
    let g = e / (per * group);
    let s = (e / group) % per;
    let l = e % group;
    return (qbyte(a + g * group + l) >> (s * w)) & ((1u << w) - 1u);
}

// The 4 bytes at a as one word: one load where a is on 4 bytes.
fn qword(a: u32) -> u32 {
    if ((a & 3u) == 0u) {
        return q[a >> 2u];
    }
    return qu32(a);
}

// A word's 4 bytes as floats.
fn bytes_f32(w: u32) -> vec4<f32> {
    return vec4<f32>(f32(w & 255u), f32((w >> 8u) & 255u), f32((w >> 16u) & 255u), f32(w >> 24u));
}

// Q4_K / Q5_K: eight 6-bit (scale, min) pairs packed in 12 bytes at a.
fn scale_min_k4(a: u32, i: u32) -> vec2<f32> {
    if (i < 4u) {
        return vec2<f32>(f32(qbyte(a + i) & 63u), f32(qbyte(a + i + 4u) & 63u));
    }
    let sc = (qbyte(a + i + 4u) & 15u) | ((qbyte(a + i - 4u) >> 6u) << 4u);
    let m = (qbyte(a + i + 4u) >> 4u) | ((qbyte(a + i) >> 6u) << 4u);
    return vec2<f32>(f32(sc), f32(m));
}

const IQ4NL = array<f32, 16>(-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                             1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
const MXFP4 = array<f32, 16>(0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
                             0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);

// Element j of the block starting at byte b.
fn deq(b: u32, j: u32) -> f32 {
#if QT_Q4_0
    return qf16(b) * (f32(qfield(b + 2u, j, 4u, 16u)) - 8.0);
#endif
#if QT_Q4_1
    return qf16(b) * f32(qfield(b + 4u, j, 4u, 16u)) + qf16(b + 2u);
#endif
#if QT_Q5_0
    let hi = (qu32(b + 2u) >> j) & 1u;
    return qf16(b) * (f32(qfield(b + 6u, j, 4u, 16u) | (hi << 4u)) - 16.0);
#endif
#if QT_Q5_1
    let hi = (qu32(b + 4u) >> j) & 1u;
    return qf16(b) * f32(qfield(b + 8u, j, 4u, 16u) | (hi << 4u)) + qf16(b + 2u);
#endif
#if QT_Q8_0
    return qf16(b) * qi8(b + 2u + j);
#endif
#if QT_Q2_K
    let sc = qbyte(b + j / 16u);
    return qf16(b + 80u) * f32(sc & 15u) * f32(qfield(b + 16u, j, 2u, 32u)) - qf16(b + 82u) * f32(sc >> 4u);
#endif
#if QT_Q3_K
    // 16 six-bit scales: low 4 bits in bytes 0..7 (two per byte), high 2
    // bits in bytes 8..11 (four per byte).
    let i = j / 16u;
    let lo = select(qbyte(b + 96u + i - 8u) >> 4u, qbyte(b + 96u + i) & 15u, i < 8u);
    let hi = (qbyte(b + 104u + (i % 4u)) >> (2u * (i / 4u))) & 3u;
    let scale = f32(lo | (hi << 4u)) - 32.0;
    let v = f32(qfield(b + 32u, j, 2u, 32u)) - select(4.0, 0.0, qfield(b, j, 1u, 32u) == 1u);
    return qf16(b + 108u) * scale * v;
#endif
#if QT_Q4_K
    let sm = scale_min_k4(b + 4u, j / 32u);
    return qf16(b) * sm.x * f32(qfield(b + 16u, j, 4u, 32u)) - qf16(b + 2u) * sm.y;
#endif
#if QT_Q5_K
    let sm = scale_min_k4(b + 4u, j / 32u);
    let v = qfield(b + 48u, j, 4u, 32u) | (qfield(b + 16u, j, 1u, 32u) << 4u);
    return qf16(b) * sm.x * f32(v) - qf16(b + 2u) * sm.y;
#endif
#if QT_Q6_K
    let v = qfield(b, j, 4u, 64u) | (qfield(b + 128u, j, 2u, 32u) << 4u);
    return qf16(b + 208u) * qi8(b + 192u + j / 16u) * (f32(v) - 32.0);
#endif
#if QT_Q8_K
    return bitcast<f32>(qu32(b)) * qi8(b + 4u + j);
#endif
#if QT_IQ4_NL
    return qf16(b) * IQ4NL[qfield(b + 2u, j, 4u, 16u)];
#endif
#if QT_MXFP4
    // E8M0 scale, halved because the table holds doubled e2m1 values.
    let e = qbyte(b);
    let d = bitcast<f32>(select((e - 1u) << 23u, 0x00200000u << e, e < 2u));
    return MXFP4[qfield(b + 1u, j, 4u, 16u)] * d;
#endif
}

// Elements j .. j + 3 of the block at byte b (j a multiple of 4: one
// sub-block, one scale).  Q4_K and Q6_K (a Q4_K_M model's types) take
// their four quants as one word of each bit plane, with the same
// arithmetic as deq(); the others call deq() four times.
fn deq4(b: u32, j: u32) -> vec4<f32> {
#ifdef QT_Q4_K
    let sm = scale_min_k4(b + 4u, j / 32u);
    let w = (qword(b + 16u + (j / 64u) * 32u + j % 32u) >> (((j / 32u) % 2u) * 4u)) & 0x0f0f0f0fu;
    return qf16(b) * sm.x * bytes_f32(w) - qf16(b + 2u) * sm.y;
#else
#ifdef QT_Q6_K
    let lo = (qword(b + (j / 128u) * 64u + j % 64u) >> (((j / 64u) % 2u) * 4u)) & 0x0f0f0f0fu;
    let hi = (qword(b + 128u + (j / 128u) * 32u + j % 32u) >> (((j / 32u) % 4u) * 2u)) & 0x03030303u;
    return qf16(b + 208u) * qi8(b + 192u + j / 16u) * (bytes_f32(lo | (hi << 4u)) - 32.0);
#else
    return vec4<f32>(deq(b, j), deq(b, j + 1u), deq(b, j + 2u), deq(b, j + 3u));
#endif
#endif
}
