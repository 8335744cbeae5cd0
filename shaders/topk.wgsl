// Kernel spec family "topk" (src/ops/topk.rs): the k best entries of every
// row (the last dim), sorted, with their indices. Prelude: T (values), I
// (indices: i32 or u32). Overrides: LARGEST (best = largest, else smallest),
// SELECT (order only the best k: radix select, then sort k; else sort all C).
//
// Order: every value maps to a 32-bit key that sorts ascending from the
// best: floats by their bits made monotonic, NaN above +inf (as
// torch.topk), -0 equal to +0; LARGEST inverts the key. Ties are broken by
// the lower index: entries sort by (key, index).
//
// A workgroup sorts C = 2048 entries in workgroup memory (bitonic sort).
//   chunk_to_out:      rows of at most C: one workgroup per row sorts it
//                      and writes its first k to the outputs.
//   chunk_to_scratch:  longer rows: one workgroup per (row, chunk of C)
//                      writes the chunk's best k (key, index) pairs.
//   merge_to_scratch:  one workgroup per (row, group of `per_group` lists):
//                      the group's best k.
//   merge_to_out:      one workgroup per row merges its last lists into
//                      the outputs.
// A list holds k pairs; missing entries are (0xffffffff, 0xffffffff), which
// sort after every real entry. Values are written from x at the winning
// index, so they are the input's exact bits.
// Grids: workgroup g = wid.y * p.row + wid.x.
//
// SELECT (k <= K_MAX): a full sort of C entries costs ~66 barrier-separated
// passes over workgroup memory per chunk; instead a radix select finds the
// k-th entry by the 64-bit (key, index) pair, one byte per pass from the
// key's top byte (index bytes only when the key ties), stopping as soon as
// the chosen bin is taken whole. The k entries at or before it are gathered
// and only those are bitonic-sorted. Pairs are unique, so exactly k are taken.

override LARGEST: bool = true;
override SELECT: bool = false;

const WG: u32 = 256u;
const C: u32 = 2048u;
const NONE: u32 = 0xffffffffu;

struct Params {
    rows: u32,
    len: u32,
    k: u32,
    lists: u32,
    per_group: u32,
    out_lists: u32,
    row: u32,
    rank: u32,
    kind: u32,
    x_offset: u32,
    v_offset: u32,
    i_offset: u32,
    x_stride: i32,
    v_stride: i32,
    i_stride: i32,
    _pad0: u32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<i32>, 2>,
    v_strides: array<vec4<i32>, 2>,
    i_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> values: array<T>;
@group(0) @binding(3) var<storage, read_write> indices: array<I>;
@group(0) @binding(4) var<storage, read> lists_in: array<vec2<u32>>;
@group(0) @binding(5) var<storage, read_write> lists_out: array<vec2<u32>>;

var<workgroup> keys: array<u32, C>;
var<workgroup> idx: array<u32, C>;

// SELECT: at most K_MAX chosen entries, byte histograms, the select state.
const K_MAX: u32 = 256u;
var<workgroup> sel_keys: array<u32, K_MAX>;
var<workgroup> sel_idx: array<u32, K_MAX>;
var<workgroup> hist: array<atomic<u32>, 256>;
var<workgroup> part: array<u32, 16>;
var<workgroup> taken: atomic<u32>;
// (key prefix, index prefix, entries still needed, passes done when finished else 0)
var<workgroup> state: vec4<u32>;

// Offsets of row r in x, values and indices.
fn row_bases(r: u32) -> vec3<i32> {
    var rem = r;
    var off = vec3<i32>(i32(p.x_offset), i32(p.v_offset), i32(p.i_offset));
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let c = i32(rem % n);
        rem = rem / n;
        off += c * vec3<i32>(p.x_strides[d / 4][d % 4], p.v_strides[d / 4][d % 4], p.i_strides[d / 4][d % 4]);
    }
    return off;
}

// The sort key of v (p.kind: 0 float, 1 signed, 2 unsigned integer).
fn key_of(v: T) -> u32 {
    var k: u32;
    if (p.kind == 0u) {
        var b = bitcast<u32>(f32(v));
        if ((b & 0x7fffffffu) > 0x7f800000u) {
            b = 0x7fffffffu; // every NaN, above +inf
        } else if ((b & 0x7fffffffu) == 0u) {
            b = 0u; // -0 == +0
        }
        k = select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
    } else if (p.kind == 1u) {
        k = u32(v) ^ 0x80000000u;
    } else {
        k = u32(v);
    }
    if (LARGEST) {
        k = ~k;
    }
    return k;
}

fn before(ka: u32, ia: u32, kb: u32, ib: u32) -> bool {
    return ka < kb || (ka == kb && ia < ib);
}

// Sort keys/idx ascending by (key, index). Callers fill all C slots first.
fn bitonic_sort(lid: u32) {
    for (var size = 2u; size <= C; size <<= 1u) {
        for (var stride = size >> 1u; stride > 0u; stride >>= 1u) {
            workgroupBarrier();
            for (var t = lid; t < C / 2u; t += WG) {
                let a = 2u * t - (t & (stride - 1u));
                let b = a + stride;
                let ka = keys[a];
                let ia = idx[a];
                let kb = keys[b];
                let ib = idx[b];
                let up = (a & size) == 0u;
                if (before(kb, ib, ka, ia) == up) {
                    keys[a] = kb;
                    idx[a] = ib;
                    keys[b] = ka;
                    idx[b] = ia;
                }
            }
        }
    }
    workgroupBarrier();
}

// The (key, index) bits decided before pass `digit_no` (of 8 bytes, key first).
fn decided(digit_no: u32) -> vec2<u32> {
    var m = vec2<u32>(0xffffffffu, 0xffffffffu);
    if (digit_no < 4u) {
        m = vec2<u32>(select(0xffffffffu << (32u - 8u * digit_no), 0u, digit_no == 0u), 0u);
    } else if (digit_no < 8u) {
        m.y = select(0xffffffffu << (32u - 8u * (digit_no - 4u)), 0u, digit_no == 4u);
    }
    return m;
}

// Byte `digit_no` of the pair (key, index), most significant first.
fn digit(key: u32, i: u32, digit_no: u32) -> u32 {
    let v = select(i, key, digit_no < 4u);
    return (v >> (24u - 8u * (digit_no % 4u))) & 0xffu;
}

// Sort sel_keys/sel_idx[0, n) ascending by (key, index); n a power of two.
fn bitonic_sort_selected(n: u32, lid: u32) {
    for (var size = 2u; size <= n; size <<= 1u) {
        for (var stride = size >> 1u; stride > 0u; stride >>= 1u) {
            workgroupBarrier();
            for (var t = lid; t < n / 2u; t += WG) {
                let a = 2u * t - (t & (stride - 1u));
                let b = a + stride;
                let ka = sel_keys[a];
                let ia = sel_idx[a];
                let kb = sel_keys[b];
                let ib = sel_idx[b];
                if (before(kb, ib, ka, ia) == ((a & size) == 0u)) {
                    sel_keys[a] = kb;
                    sel_idx[a] = ib;
                    sel_keys[b] = ka;
                    sel_idx[b] = ia;
                }
            }
        }
    }
    workgroupBarrier();
}

// The best min(k, real entries) of keys/idx (empty slots have index NONE),
// sorted, into keys/idx[0, k); the rest of [0, k) empty.
fn select_first_k(lid: u32) {
    if (lid == 0u) {
        state = vec4<u32>(0u, 0u, p.k, 0u);
        atomicStore(&taken, 0u);
    }
    for (var digit_no = 0u; digit_no < 8u; digit_no++) {
        // (The load's barrier also ends the last digit_no's reads of hist.)
        let st = workgroupUniformLoad(&state);
        if (st.w != 0u) {
            break;
        }
        atomicStore(&hist[lid], 0u);
        workgroupBarrier();
        let m = decided(digit_no);
        for (var j = lid; j < C; j += WG) {
            let i = idx[j];
            let key = keys[j];
            if (i != NONE && (key & m.x) == st.x && (i & m.y) == st.y) {
                atomicAdd(&hist[digit(key, i, digit_no)], 1u);
            }
        }
        workgroupBarrier();
        if (lid < 16u) {
            var s = 0u;
            for (var b = 0u; b < 16u; b++) {
                s += atomicLoad(&hist[lid * 16u + b]);
            }
            part[lid] = s;
        }
        workgroupBarrier();
        if (lid < 16u) {
            var below = 0u;
            var total = 0u;
            for (var q = 0u; q < 16u; q++) {
                below += select(0u, part[q], q < lid);
                total += part[q];
            }
            if (total <= st.z) {
                // Only on the first digit_no: no more than k real entries, take all.
                if (lid == 0u) {
                    state = vec4<u32>(NONE, NONE, total, 8u);
                }
            } else if (below < st.z && st.z <= below + part[lid]) {
                var run = below;
                for (var b = lid * 16u; b < lid * 16u + 16u; b++) {
                    let h = atomicLoad(&hist[b]);
                    if (run + h >= st.z) {
                        let need = st.z - run;
                        let shift = 24u - 8u * (digit_no % 4u);
                        var pre = st.xy;
                        if (digit_no < 4u) {
                            pre.x |= b << shift;
                        } else {
                            pre.y |= b << shift;
                        }
                        state = vec4<u32>(pre, need, select(0u, digit_no + 1u, h == need));
                        break;
                    }
                    run += h;
                }
            }
        }
    }
    // Take every real entry whose decided bits are at or before the prefix.
    let st = workgroupUniformLoad(&state);
    let m = decided(st.w);
    for (var j = lid; j < C; j += WG) {
        let i = idx[j];
        let key = keys[j] & m.x;
        if (i != NONE && (key < st.x || (key == st.x && (i & m.y) <= st.y))) {
            let s = atomicAdd(&taken, 1u);
            sel_keys[s] = keys[j];
            sel_idx[s] = i;
        }
    }
    let n = max(2u, 1u << (32u - countLeadingZeros(p.k - 1u)));
    let got = workgroupUniformLoad(&taken);
    for (var j = got + lid; j < n; j += WG) {
        sel_keys[j] = NONE;
        sel_idx[j] = NONE;
    }
    bitonic_sort_selected(n, lid);
    for (var j = lid; j < p.k; j += WG) {
        keys[j] = sel_keys[j];
        idx[j] = sel_idx[j];
    }
    workgroupBarrier();
}

// The best k entries first in keys/idx.
fn order(lid: u32) {
    if (SELECT) {
        select_first_k(lid);
    } else {
        bitonic_sort(lid);
    }
}

// Fill the slots with chunk `c` of the row at x offset `xb`.
fn load_chunk(xb: i32, c: u32, lid: u32) {
    for (var j = lid; j < C; j += WG) {
        let e = c * C + j;
        if (e < p.len) {
            keys[j] = key_of(x[xb + i32(e) * p.x_stride]);
            idx[j] = e;
        } else {
            keys[j] = NONE;
            idx[j] = NONE;
        }
    }
}

// Fill the slots with lists [first, first + per_group) of row r (those that exist).
fn load_lists(r: u32, first: u32, lid: u32) {
    let count = min(p.per_group, p.lists - first);
    let base = (r * p.lists + first) * p.k;
    for (var j = lid; j < C; j += WG) {
        var e = vec2<u32>(NONE, NONE);
        if (j < count * p.k) {
            e = lists_in[base + j];
        }
        keys[j] = e.x;
        idx[j] = e.y;
    }
}

// The first k sorted entries to the outputs of the row with bases `b`.
fn write_out(b: vec3<i32>, lid: u32) {
    for (var j = lid; j < p.k; j += WG) {
        let e = idx[j];
        values[b.y + i32(j) * p.v_stride] = x[b.x + i32(e) * p.x_stride];
        indices[b.z + i32(j) * p.i_stride] = I(e);
    }
}

// The first k sorted entries to list `list` of lists_out.
fn write_list(list: u32, lid: u32) {
    for (var j = lid; j < p.k; j += WG) {
        lists_out[list * p.k + j] = vec2<u32>(keys[j], idx[j]);
    }
}

fn group_of(wid: vec3<u32>) -> u32 {
    return wid.y * p.row + wid.x;
}

@compute @workgroup_size(WG)
fn chunk_to_out(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = group_of(wid);
    if (r >= p.rows) {
        return;
    }
    let b = row_bases(r);
    load_chunk(b.x, 0u, lid);
    order(lid);
    write_out(b, lid);
}

@compute @workgroup_size(WG)
fn chunk_to_scratch(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = group_of(wid);
    if (g >= p.rows * p.out_lists) {
        return;
    }
    let b = row_bases(g / p.out_lists);
    load_chunk(b.x, g % p.out_lists, lid);
    order(lid);
    write_list(g, lid);
}

@compute @workgroup_size(WG)
fn merge_to_scratch(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = group_of(wid);
    if (g >= p.rows * p.out_lists) {
        return;
    }
    load_lists(g / p.out_lists, (g % p.out_lists) * p.per_group, lid);
    order(lid);
    write_list(g, lid);
}

@compute @workgroup_size(WG)
fn merge_to_out(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = group_of(wid);
    if (r >= p.rows) {
        return;
    }
    load_lists(r, 0u, lid);
    order(lid);
    write_out(row_bases(r), lid);
}
