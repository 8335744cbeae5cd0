// Kernel spec family "topk" (src/ops/topk.rs): the k best entries of every
// row (the last dim), sorted, with their indices. Prelude: T (values), I
// (indices: i32 or u32). Overrides: LARGEST (best = largest, else smallest).
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

override LARGEST: bool = true;

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
    bitonic_sort(lid);
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
    bitonic_sort(lid);
    write_list(g, lid);
}

@compute @workgroup_size(WG)
fn merge_to_scratch(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = group_of(wid);
    if (g >= p.rows * p.out_lists) {
        return;
    }
    load_lists(g / p.out_lists, (g % p.out_lists) * p.per_group, lid);
    bitonic_sort(lid);
    write_list(g, lid);
}

@compute @workgroup_size(WG)
fn merge_to_out(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = group_of(wid);
    if (r >= p.rows) {
        return;
    }
    load_lists(r, 0u, lid);
    bitonic_sort(lid);
    write_out(row_bases(r), lid);
}
