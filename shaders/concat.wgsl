// Kernel spec family "concat" (src/ops/concat.rs): copy one view into
// another of the same shape; concat copies each input into its slice of
// the output. Prelude: T (element type). Overrides: WG (workgroup size).
//
// y[y_base(o)] = x[x_base(o)] for every logical index o, where each base
// adds o's coordinates times that view's strides.
// copy: one element per invocation.
// copy_vec4: four consecutive elements of the last dim (stride 1 in both
//   views); offsets, strides and the last dim's length in vec4 units.
// copy_pairs: 2-byte types whose last dim has stride 1 in both views but
//   whose rows are not 4-aligned (odd widths or offsets): each invocation
//   writes PAIR_WORDS 4-byte words of one destination row (x's pair read as
//   one word or two, funnel-shifted), and an element alone at a row's head
//   or tail with a 2-byte store. n = rows, shape's last dim = 1 (bases give
//   row starts), width = row length, blocks = workgroups per row.
// Invocations are spread over a 2-D grid: linear = gid.y * row + gid.x.

override WG: u32 = 256u;

struct Params {
    n: u32,
    row: u32,
    rank: u32,
    x_offset: u32,
    y_offset: u32,
    width: u32,
    blocks: u32,
    _pad0: u32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<i32>, 2>,
    y_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> y: array<T>;
@group(0) @binding(3) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(4) var<storage, read_write> y4: array<vec4<T>>;
@group(0) @binding(5) var<storage, read> xw: array<u32>;
@group(0) @binding(6) var<storage, read_write> yw: array<u32>;

// Words each copy_pairs invocation writes (WG apart: coalesced).
const PAIR_WORDS: u32 = 2u;

// Offsets of logical element `o` in x and y.
fn bases(o: u32) -> vec2<i32> {
    var rem = o;
    var off = vec2<i32>(i32(p.x_offset), i32(p.y_offset));
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let c = i32(rem % n);
        rem = rem / n;
        off += c * vec2<i32>(p.x_strides[d / 4][d % 4], p.y_strides[d / 4][d % 4]);
    }
    return off;
}

@compute @workgroup_size(WG)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.y * p.row + gid.x;
    if (o >= p.n) {
        return;
    }
    let b = bases(o);
    y[b.y] = x[b.x];
}

@compute @workgroup_size(WG)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.y * p.row + gid.x;
    if (o >= p.n) {
        return;
    }
    let b = bases(o);
    y4[b.y] = x4[b.x];
}

// The two 2-byte elements of x from element s, as one word.
fn x_pair(s: u32) -> u32 {
    let w = s >> 1u;
    if ((s & 1u) == 0u) {
        return xw[w];
    }
    return (xw[w] >> 16u) | (xw[w + 1u] << 16u);
}

@compute @workgroup_size(WG)
fn copy_pairs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = wid.y * (p.row / WG) + wid.x;
    let r = g / p.blocks;
    if (r >= p.n) {
        return;
    }
    let b = bases(r);
    let x0 = u32(b.x);
    let y0 = u32(b.y);
    let end = y0 + p.width;
    for (var j = 0u; j < PAIR_WORDS; j++) {
        // First element of the destination word: 2 * (the row's first word + q).
        let e = ((y0 >> 1u) + ((g % p.blocks) * PAIR_WORDS + j) * WG + lid) * 2u;
        if (e >= end) {
            break;
        }
        if (e < y0) {
            y[e + 1u] = x[x0]; // the row's first element ends a word
        } else if (e + 1u == end) {
            y[e] = x[x0 + (e - y0)]; // its last element starts one
        } else {
            yw[e >> 1u] = x_pair(x0 + (e - y0));
        }
    }
}
