// Chunked sampling (sample.wgsl with CHUNKED; sample.c sample_chunked).
// Rows are cut into chunks of P.h.x logits; a launch of sample_part runs
// one workgroup per (row, chunk) and writes the chunk's partials, and a
// launch of sample_step runs one workgroup per row that merges them and
// moves the row's search, whose state lives in sv[] between dispatches.
// Two hosts: rows longer than one binding window (a launch per chunk, one
// row at a time, P.h.z = 1) and the split path for few rows of a large
// vocabulary (every chunk of every row in one launch, P.h.z = chunks).
//
// Candidates (P.h.y != 0: 1 <= top_k <= KMAX, split path): stage 0 also
// finds each chunk's k-th largest key kc and lists the chunk's keys above
// it, with kc and its count.  Every chunk's kc is <= the row's k-th largest
// key t, so the lists hold every key above t and the counts every key
// equal to t: the step finds t and the top-p threshold from them alone,
// which replaces the 32 + 33 probe launches of the search.
//
// Workgroups are 256 threads (WG): the 16 x 16 scans below rely on it.

const KMAX: u32 = 256u;     // sample.c SAMPLE_KMAX: the most candidates a chunk lists

// The search state of a row (words of sv, 16 a row).
const SV_MK: u32 = 0u;      // largest key
const SV_PHASE: u32 = 1u;   // Search.phase; 4: chunk picked, 5: written (greedy)
const SV_T: u32 = 2u;
const SV_LO: u32 = 3u;
const SV_HI: u32 = 4u;
const SV_MID: u32 = 5u;
const SV_WANT: u32 = 6u;
const SV_CHUNK: u32 = 7u;   // the chunk holding the draw
const SV_GOAL: u32 = 8u;    // the draw's offset within that chunk's mass

var<workgroup> hist: array<atomic<u32>, 256>;   // radix digits
var<workgroup> rsel: vec4<u32>;
var<workgroup> nsel: atomic<u32>;
var<workgroup> wsv: u32;
var<workgroup> sel: array<u32, KMAX>;           // keys above t (top-p)
var<workgroup> srt: array<u32, KMAX>;           // ... sorted, largest first

fn sv_search(sb: u32) -> Search {
    return Search(sv[sb + SV_PHASE], sv[sb + SV_T], sv[sb + SV_LO], sv[sb + SV_HI], sv[sb + SV_MID],
                  bitcast<f32>(sv[sb + SV_WANT]));
}

fn sv_store(sb: u32, s: Search) {
    sv[sb + SV_PHASE] = s.phase;
    sv[sb + SV_T] = s.t;
    sv[sb + SV_LO] = s.lo;
    sv[sb + SV_HI] = s.hi;
    sv[sb + SV_MID] = s.mid;
    sv[sb + SV_WANT] = bitcast<u32>(s.want);
}

// A state word as a uniform value (branches around barriers may use it).
fn sv_load(li: u32, i: u32) -> u32 {
    if (li == 0u) {
        wsv = sv[i];
    }
    let v = workgroupUniformLoad(&wsv);
    workgroupBarrier();
    return v;
}

// Inclusive scan of sh_f (WG = 256 values) in index order: 16 threads scan
// 16 values each, thread 0 the 16 group totals, then each value gets its
// group's offset.  Every step is a sum of non-negative terms in index
// order, so the sums never decrease (block_sums' intervals must tile
// [0, total) with one owner for each goal) at a depth of ~32 additions
// where one thread's chain of 256 took ~5 us on an H100.  Returns the total.
fn scan_16x16(li: u32) -> f32 {
    if (li < 16u) {
        var acc = 0.0;
        for (var j = 16u * li; j < 16u * li + 16u; j++) {
            acc = acc + sh_f[j];
            sh_f[j] = acc;
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        var acc = 0.0;
        for (var g = 0u; g < 16u; g++) {
            acc = acc + sh_f[16u * g + 15u];
            sh_a[g] = bitcast<u32>(acc);   // the scanned group totals
        }
        res_f = acc;
    }
    workgroupBarrier();
    let g = li / 16u;
    if (g > 0u) {
        sh_f[li] = bitcast<f32>(sh_a[g - 1u]) + sh_f[li];
    }
    return workgroupUniformLoad(&res_f);
}

// Where chunk (or row) work lives.
struct Part {
    live: bool,
    r: u32,     // row in the launch
    c: u32,     // chunk of the row
    rb: u32,    // its first logit in the binding
    n: u32,     // its logits
    i0: u32,    // its first logit's index in the row
    sb: u32,    // the row's state in sv
    pb: u32,    // the chunk's partials in pt (4 words)
    lb: u32,    // the row's first candidate list in pt
}

fn part_of(lin: u32) -> Part {
    let per = P.h.z;
    let r = lin / per;
    let j = lin - r * per;
    let c = P.e.z + j;
    var q: Part;
    q.live = r < P.a.x && c < P.e.w;   // a folded grid may overshoot
    q.r = r;
    q.c = c;
    q.i0 = c * P.h.x;
    q.n = select(0u, min(P.h.x, P.a.y - q.i0), q.live);
    q.rb = P.a.z + r * P.a.w + j * P.h.x * P.b.x;
    q.sb = 16u * r;
    q.pb = 4u * (r * P.e.w + c);
    q.lb = 4u * P.a.x * P.e.w + P.h.y * r * P.e.w;
    return q;
}

// Item j of a selection as (key, count): src 0 the n logits from rb; src 1
// the row's candidate lists from lb (k + 1 items a chunk: its listed keys,
// then kc with its count; unused slots count 0).
fn cand_item(src: u32, rb: u32, j: u32, lb: u32, k: u32) -> vec2<u32> {
    if (src == 0u) {
        return vec2<u32>(skey(logit(rb, j)), 1u);
    }
    let c = j / (k + 1u);
    let s = j - c * (k + 1u);
    let base = lb + c * P.h.y;   // kc, its count, keys above kc, the keys
    if (s == k) {
        return vec2<u32>(pt[base], pt[base + 1u]);
    }
    if (s < pt[base + 2u]) {
        return vec2<u32>(pt[base + 3u + s], 1u);
    }
    return vec2<u32>(0u, 0u);
}

// The k-th largest key among the n items with a key above 0 (NaN), by
// count: (t, how many equal t, how many exceed t); (1, 0, valid items)
// when there are fewer than k.  Radix select over 8-bit digits, most
// significant first: each round counts the items that match the digits
// found so far by their next digit (workgroup atomics: integer counts, so
// the result does not depend on their order) and keeps the digit where
// the count from the top reaches k.
fn radix_kth(li: u32, src: u32, rb: u32, n: u32, lb: u32, k: u32) -> vec3<u32> {
    var prefix = 0u;
    var need = k;
    var eq = 0u;
    for (var rd = 0u; rd < 4u; rd++) {
        let sh = 24u - 8u * rd;
        for (var b = li; b < 256u; b += WG) {
            atomicStore(&hist[b], 0u);
        }
        workgroupBarrier();
        // a thread's run of equal digits is one atomic: logits of one
        // exponent range share round 0's digit, and atomics on one
        // address serialise
        var pd = 0u;
        var pc = 0u;
        for (var j = li; j < n; j += WG) {
            let it = cand_item(src, rb, j, lb, k);
            // rd 0 has no digits above it (a shift by 32 is not allowed)
            if (it.x != 0u && it.y != 0u && (rd == 0u || (it.x >> (sh + 8u)) == prefix)) {
                let dg = (it.x >> sh) & 255u;
                if (dg != pd && pc != 0u) {
                    atomicAdd(&hist[pd], pc);
                    pc = 0u;
                }
                pd = dg;
                pc += it.y;
            }
        }
        if (pc != 0u) {
            atomicAdd(&hist[pd], pc);
        }
        workgroupBarrier();
        if (li < 16u) {
            var s = 0u;
            for (var b = 16u * li; b < 16u * li + 16u; b++) {
                s += atomicLoad(&hist[b]);
            }
            sh_c[li] = s;
        }
        workgroupBarrier();
        if (li == 0u) {
            // from the largest digit down: the group, then the digit in it
            var acc = 0u;
            var d = NONE;
            var h = 0u;
            for (var g = 16u; g > 0u; g--) {
                if (acc + sh_c[g - 1u] >= need) {
                    for (var b = 16u * g; b > 16u * g - 16u; b--) {
                        h = atomicLoad(&hist[b - 1u]);
                        if (acc + h >= need) {
                            d = b - 1u;
                            break;
                        }
                        acc += h;
                    }
                    break;
                }
                acc += sh_c[g - 1u];
            }
            rsel = vec4<u32>(d, need - acc, h, acc);
        }
        let rs = workgroupUniformLoad(&rsel);
        if (rs.x == NONE) {   // only in round 0: fewer than k valid items
            return vec3<u32>(1u, 0u, rs.w);
        }
        prefix = (prefix << 8u) | rs.x;
        need = rs.y;
        eq = rs.z;
    }
    return vec3<u32>(prefix, eq, k - need);
}

// Stage 0 of a chunk with candidates: kc (the chunk's k-th largest key, 1
// when it has fewer than k valid logits), its count, and the keys above it
// (fewer than k; in no particular order: only their multiset is used).
fn list_chunk(li: u32, q: Part) {
    let k = P.c.x;
    let kt = radix_kth(li, 0u, q.rb, q.n, 0u, k);
    let base = q.lb + q.c * P.h.y;
    if (li == 0u) {
        atomicStore(&nsel, 0u);
        pt[base] = kt.x;
        pt[base + 1u] = kt.y;
        pt[base + 2u] = kt.z;
    }
    workgroupBarrier();
    for (var j = li; j < q.n; j += WG) {
        let key = skey(logit(q.rb, j));
        if (key > kt.x) {
            let s = atomicAdd(&nsel, 1u);
            if (s < k) {
                pt[base + 3u + s] = key;
            }
        }
    }
}

// top-p over the candidates (kt: radix_kth's result for top_k): the keys
// above t, sorted, and t's count; thread 0 sums their weights largest
// first and keeps the largest key whose run from the top reaches top_p of
// the kept mass (ties at a value all kept, as the search's rule).
fn topp_cands(li: u32, lb: u32, K: u32, kt: vec3<u32>, m: f32) -> u32 {
    let k = P.c.x;
    if (li == 0u) {
        atomicStore(&nsel, 0u);
    }
    workgroupBarrier();
    for (var j = li; j < K * (k + 1u); j += WG) {
        let it = cand_item(1u, 0u, j, lb, k);
        if (it.x > kt.x) {   // listed keys: kc <= t never passes
            let s = atomicAdd(&nsel, 1u);
            if (s < KMAX) {
                sel[s] = it.x;
            }
        }
    }
    workgroupBarrier();
    let ns = min(atomicLoad(&nsel), KMAX);
    // rank sort: equal keys are interchangeable (same weight), so the
    // sorted array does not depend on the order the lists were filled in
    for (var i = li; i < ns; i += WG) {
        let x = sel[i];
        var rank = 0u;
        for (var j = 0u; j < ns; j++) {
            let y = sel[j];
            rank += select(0u, 1u, y > x || (y == x && j < i));
        }
        srt[rank] = x;
    }
    workgroupBarrier();
    if (li == 0u) {
        var tot = 0.0;
        var tc = 0.0;
        for (var i = 0u; i < ns; i++) {
            let y = exp((unkey(srt[i]) - m) * P.f.x) - tc;
            let nt = tot + y;
            tc = (nt - tot) - y;
            tot = nt;
        }
        if (kt.y > 0u) {
            tot = tot + (f32(kt.y) * exp((unkey(kt.x) - m) * P.f.x) - tc);
        }
        let want = P.f.y * tot;
        var cum = 0.0;
        var cc = 0.0;
        var t = kt.x;
        var i = 0u;
        loop {
            if (i >= ns) {
                break;
            }
            let key = srt[i];
            loop {
                if (i >= ns || srt[i] != key) {
                    break;
                }
                let y = exp((unkey(key) - m) * P.f.x) - cc;
                let nc = cum + y;
                cc = (nc - cum) - y;
                cum = nc;
                i++;
            }
            if (cum >= want) {
                t = key;
                break;
            }
        }
        wsv = t;
    }
    let t = workgroupUniformLoad(&wsv);
    workgroupBarrier();
    return t;
}

#ifndef STEP
// Stages, one workgroup a chunk (pt: 4 words a chunk):
//   0 range_max -> (key, index); with candidates also the chunk's list
//   1 stats at (t, mid) -> Stats
//   2 block_sums at the final t -> mass
//   3 the picked chunk draws at SV_GOAL and writes out
@compute @workgroup_size({{WG}})
fn sample_part(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let q = part_of(wg_linear(wid, nwg));
    if (!q.live) {
        return;
    }
    if (P.e.y == 0u) {
        let best = range_max(li, q.rb, q.n);
        if (li == 0u) {
            pt[q.pb] = best.x;
            pt[q.pb + 1u] = select(best.y + q.i0, NONE, best.y == NONE);
        }
        if (P.h.y != 0u) {
            list_chunk(li, q);
        }
        return;
    }
    // Nothing to do once the row's search has ended (stage 1), was written
    // greedily (5), or (stage 3) the draw is in another chunk.
    let phase = sv_load(li, q.sb + SV_PHASE);
    let m = unkey(sv[q.sb + SV_MK]);
    if (P.e.y == 1u) {
        if (phase >= 3u) {
            return;
        }
        let s = sv_search(q.sb);
        let st = stats(li, q.rb, q.n, s.t, s.mid, m, s.phase != 0u);
        if (li == 0u) {
            pt[q.pb] = bitcast<u32>(st.mass);
            pt[q.pb + 1u] = st.count;
            pt[q.pb + 2u] = st.above;
            pt[q.pb + 3u] = st.below;
        }
        return;
    }
    let chunk = sv_load(li, q.sb + SV_CHUNK);
    if (phase != select(4u, 3u, P.e.y == 2u) || (P.e.y == 3u && chunk != q.c)) {
        return;
    }
    let t = minp_threshold(sv[q.sb + SV_T], m);
    let total = block_sums(li, 0u, q.rb, q.n, t, m);
    if (P.e.y == 2u) {
        if (li == 0u) {
            pt[q.pb] = bitcast<u32>(total);
        }
    } else if (total > 0.0) {
        let goal = min(bitcast<f32>(sv[q.sb + SV_GOAL]), bitcast<f32>(bitcast<u32>(total) - 1u));
        let pick = walk(li, 0u, q.rb, q.n, t, m, goal).x;
        if (pick != NONE) {
            o_st(P.b.y + q.r * P.b.z, i32(pick + q.i0));
        }
    }
}

#else
// Stages over a row's chunk partials, one workgroup a row: 0 the row's
// largest key (greedy rows are written here) and, with candidates, the
// final threshold; 1 one search step; 2 the chunk holding the draw.
@compute @workgroup_size({{WG}})
fn sample_step(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) li: u32) {
    let r = wg_linear(wid, nwg);
    if (r >= P.a.x) {
        return;
    }
    let K = P.e.w;
    let sb = 16u * r;
    let pb = 4u * r * K;
    if (P.e.y == 0u) {
        var bk = 0u;
        var bi = NONE;
        for (var c = li; c < K; c += WG) { // a thread's chunks in index order: ties keep the first
            let i2 = pt[pb + 4u * c + 1u];
            if (i2 != NONE && (bi == NONE || pt[pb + 4u * c] > bk)) {
                bk = pt[pb + 4u * c];
                bi = i2;
            }
        }
        let best = argmax_tree(li, bk, bi);
        let mk = best.x;
        let m = unkey(mk);
        if ((P.c.y & F_GREEDY) != 0u || (bitcast<u32>(m) & 0x7f800000u) == 0x7f800000u) {
            if (li == 0u) {
                o_st(P.b.y + r * P.b.z, i32(best.y));
                sv[sb + SV_PHASE] = 5u;
            }
            return;
        }
        if (P.h.y != 0u) {
            let lb = 4u * P.a.x * K + P.h.y * r * K;
            let kt = radix_kth(li, 1u, 0u, K * (P.c.x + 1u), lb, P.c.x);
            var t = kt.x;
            if ((P.c.y & F_TOPP) != 0u) {
                t = topp_cands(li, lb, K, kt, m);
            }
            if (li == 0u) {
                sv[sb + SV_MK] = mk;
                sv[sb + SV_T] = t;
                sv[sb + SV_PHASE] = 3u;
            }
            return;
        }
        if (li == 0u) {
            sv[sb + SV_MK] = mk;
            sv_store(sb, search_start(mk));
        }
        return;
    }
    let phase = sv_load(li, sb + SV_PHASE);
    if (P.e.y == 1u) {
        if (phase >= 3u) {
            return;
        }
        var x = Stats(0.0, 0u, NONE, 0u);
        for (var c = li; c < K; c += WG) {
            x.mass = x.mass + bitcast<f32>(pt[pb + 4u * c]);
            x.count = x.count + pt[pb + 4u * c + 1u];
            x.above = min(x.above, pt[pb + 4u * c + 2u]);
            x.below = max(x.below, pt[pb + 4u * c + 3u]);
        }
        let st = stats_tree(li, x);
        if (li == 0u) {
            sv_store(sb, search_update(sv_search(sb), st, sv[sb + SV_MK]));
        }
        return;
    }
    if (phase != 3u) {
        return;
    }
    // the chunk whose mass interval holds the draw (chunks in index order)
    let total = block_sums(li, 1u, pb, K, 0u, 0.0);
    let pk = walk(li, 1u, pb, K, 0u, 0.0, draw_goal(P.b.w + r, total));
    if (pk.x != NONE) {
        sv[sb + SV_CHUNK] = pk.x;
        sv[sb + SV_GOAL] = pk.y;
        sv[sb + SV_PHASE] = 4u;
    }
}
#endif
