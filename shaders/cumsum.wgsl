// Kernel spec family "cumsum" (src/ops/cumsum.rs): inclusive prefix sums
// along one axis. Prelude: T (element type), A (accumulator: f32 for
// floats, else T; integer sums wrap). No overrides: WG and ITEMS are fixed.
//
// A "row" is one line along the axis; rows are numbered over the other
// dims, and row_base() turns a row number into offsets in x and y. Work is
// split so that no invocation runs more than about 60,000 loop iterations
// in all (lavapipe stops an invocation's loops after 65,535 iterations
// counted over all its loops): the host picks `count` and `chunk`.
//
// Rows kind (the axis is contiguous, or there are few rows): workgroups
// scan tiles of TILE = WG * ITEMS elements, each invocation ITEMS
// consecutive ones, combined with a workgroup scan of invocation totals.
//   scan_rows:     one workgroup per row walks its tiles with a carry.
//   tile_sums:     one workgroup per (row, tile): the tile's sum to
//                  partials[row * count + tile].
//   scan_partials: one workgroup per row: partials become exclusive
//                  prefix sums, in place.
//   scan_tiles:    one workgroup per (row, tile): the tile's scan plus its
//                  prefix from partials.
// Columns kind (the axis is strided and rows are many and adjacent): one
// invocation per (row, chunk of `chunk` elements), so neighbouring
// invocations read neighbouring memory.
//   cols_direct:   the whole row (count == 1).
//   cols_sums:     the chunk's sum to partials[row * count + chunk].
//   cols_apply:    the chunk's scan from its prefix in partials.
// Grids: workgroup (or invocation) g = gid.y * p.row + gid.x.

const WG: u32 = 256u;
const ITEMS: u32 = 4u;
const TILE: u32 = 1024u;

struct Params {
    rows: u32,
    len: u32,
    count: u32,
    chunk: u32,
    row: u32,
    rank: u32,
    x_offset: u32,
    y_offset: u32,
    x_stride: i32,
    y_stride: i32,
    _pad0: u32,
    _pad1: u32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<i32>, 2>,
    y_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> y: array<T>;
@group(0) @binding(3) var<storage, read_write> partials: array<A>;

var<workgroup> totals: array<A, WG>;

// Offsets in x and y of element 0 of row `r`.
fn row_base(r: u32) -> vec2<i32> {
    var rem = r;
    var off = vec2<i32>(i32(p.x_offset), i32(p.y_offset));
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let c = i32(rem % n);
        rem = rem / n;
        off += c * vec2<i32>(p.x_strides[d / 4][d % 4], p.y_strides[d / 4][d % 4]);
    }
    return off;
}

fn load(base: i32, j: u32) -> A {
    return A(x[base + i32(j) * p.x_stride]);
}

fn store(base: i32, j: u32, v: A) {
    y[base + i32(j) * p.y_stride] = T(v);
}

// Exclusive scan of `v` over the workgroup (Hillis-Steele in workgroup
// memory); every invocation also gets the workgroup's total in .y. The
// exclusive value is read from the neighbour rather than computed as
// inclusive - v, which would cancel digits of a float sum.
fn wg_exclusive(v: A, lid: u32) -> vec2<A> {
    totals[lid] = v;
    workgroupBarrier();
    var acc = v;
    for (var off = 1u; off < WG; off <<= 1u) {
        if (lid >= off) {
            acc += totals[lid - off];
        }
        workgroupBarrier();
        totals[lid] = acc;
        workgroupBarrier();
    }
    var before = A(0);
    if (lid > 0u) {
        before = totals[lid - 1u];
    }
    let total = totals[WG - 1u];
    workgroupBarrier();
    return vec2<A>(before, total);
}

// Inclusive scan of tile `t` of the row at `b`, starting from `carry`;
// returns the tile's total.
fn scan_tile(b: vec2<i32>, t: u32, carry: A, lid: u32) -> A {
    let first = t * TILE + lid * ITEMS;
    var v: array<A, ITEMS>;
    var sum = A(0);
    for (var k = 0u; k < ITEMS; k++) {
        let j = first + k;
        if (j < p.len) {
            sum += load(b.x, j);
        }
        v[k] = sum;
    }
    let ex = wg_exclusive(sum, lid);
    let before = carry + ex.x;
    for (var k = 0u; k < ITEMS; k++) {
        let j = first + k;
        if (j < p.len) {
            store(b.y, j, before + v[k]);
        }
    }
    return ex.y;
}

// The sum of tile `t` of the row at `b` (reads x only).
fn tile_total(b: vec2<i32>, t: u32, lid: u32) -> A {
    let first = t * TILE + lid * ITEMS;
    var sum = A(0);
    for (var k = 0u; k < ITEMS; k++) {
        let j = first + k;
        if (j < p.len) {
            sum += load(b.x, j);
        }
    }
    return wg_exclusive(sum, lid).y;
}

fn group_of(wid: vec3<u32>) -> u32 {
    return wid.y * p.row + wid.x;
}

@compute @workgroup_size(WG)
fn scan_rows(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = group_of(wid);
    if (r >= p.rows) {
        return;
    }
    let b = row_base(r);
    var carry = A(0);
    for (var t = 0u; t < p.count; t++) {
        carry += scan_tile(b, t, carry, lid);
    }
}

@compute @workgroup_size(WG)
fn tile_sums(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = group_of(wid);
    if (g >= p.rows * p.count) {
        return;
    }
    let total = tile_total(row_base(g / p.count), g % p.count, lid);
    if (lid == 0u) {
        partials[g] = total;
    }
}

@compute @workgroup_size(WG)
fn scan_partials(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let r = group_of(wid);
    if (r >= p.rows) {
        return;
    }
    let base = r * p.count;
    var carry = A(0);
    for (var start = 0u; start < p.count; start += TILE) {
        // Each invocation: ITEMS consecutive partials, exclusive within it.
        let first = start + lid * ITEMS;
        var v: array<A, ITEMS>;
        var sum = A(0);
        for (var k = 0u; k < ITEMS; k++) {
            v[k] = sum;
            if (first + k < p.count) {
                sum += partials[base + first + k];
            }
        }
        let ex = wg_exclusive(sum, lid);
        for (var k = 0u; k < ITEMS; k++) {
            if (first + k < p.count) {
                partials[base + first + k] = carry + ex.x + v[k];
            }
        }
        carry += ex.y;
    }
}

@compute @workgroup_size(WG)
fn scan_tiles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = group_of(wid);
    if (g >= p.rows * p.count) {
        return;
    }
    scan_tile(row_base(g / p.count), g % p.count, partials[g], lid);
}

// Invocation g of the columns kind: (row, chunk) with rows fastest.
fn col_item(gid: vec3<u32>) -> vec2<u32> {
    let g = gid.y * p.row + gid.x;
    return vec2<u32>(g % p.rows, g / p.rows);
}

@compute @workgroup_size(WG)
fn cols_direct(@builtin(global_invocation_id) gid: vec3<u32>) {
    let it = col_item(gid);
    if (it.y >= 1u) {
        return;
    }
    let b = row_base(it.x);
    var acc = A(0);
    for (var j = 0u; j < p.len; j++) {
        acc += load(b.x, j);
        store(b.y, j, acc);
    }
}

@compute @workgroup_size(WG)
fn cols_sums(@builtin(global_invocation_id) gid: vec3<u32>) {
    let it = col_item(gid);
    if (it.y >= p.count) {
        return;
    }
    let b = row_base(it.x);
    let end = min(p.len, (it.y + 1u) * p.chunk);
    var acc = A(0);
    for (var j = it.y * p.chunk; j < end; j++) {
        acc += load(b.x, j);
    }
    partials[it.x * p.count + it.y] = acc;
}

@compute @workgroup_size(WG)
fn cols_apply(@builtin(global_invocation_id) gid: vec3<u32>) {
    let it = col_item(gid);
    if (it.y >= p.count) {
        return;
    }
    let b = row_base(it.x);
    let end = min(p.len, (it.y + 1u) * p.chunk);
    var acc = partials[it.x * p.count + it.y];
    for (var j = it.y * p.chunk; j < end; j++) {
        acc += load(b.x, j);
        store(b.y, j, acc);
    }
}
