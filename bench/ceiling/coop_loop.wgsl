// Tensor-core throughput probe: every subgroup keeps a 64 x 64 block of f32
// accumulators (4 x 4 fragments of 16x16) and multiplies 4 A by 4 B f16
// fragments `iters` times. The driver prepends `const SG` (subgroups per
// workgroup) and `const MODE`: where the fragments come from each iteration:
//   0: registers only (loaded once before the loop),
//   1: workgroup memory (reloaded every iteration, alternating halves so
//      the loads cannot be hoisted),
//   2: storage (reloaded every iteration from a small, cache-resident array),
//   3: workgroup memory as in 1, plus the staging traffic of a 128 x 128 x 16
//      GEMM step per iteration (1024 halves a subgroup) written as scalar f16
//      stores and a barrier, as the library's WGSL staging does (naga
//      loads fragments only through pointers of the matrix's own scalar
//      type, so 16-byte stores into an f16 array are not expressible),
//   4: as 3 without the stores: the barrier and the fragment loads alone.
// Inputs are all ones, so every accumulator ends at 16 * iters (checked).
enable f16;
enable wgpu_cooperative_matrix;

// @CONSTS
struct Params { iters: u32, p1: u32, p2: u32, p3: u32 }

@group(0) @binding(0) var<storage, read> src: array<f16>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

var<workgroup> tile: array<f16, 12288>;

@compute @workgroup_size(32 * SG)
fn coop_loop(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    if (MODE == 1u | MODE == 3u | MODE == 4u) {
        for (var i = lid; i < 4096u; i += 32u * SG) {
            tile[i] = src[i];
        }
        workgroupBarrier();
    }
    var fa0 = coopLoad<coop_mat16x16<f16, A>>(&src[0], 16u);
    var fa1 = coopLoad<coop_mat16x16<f16, A>>(&src[256], 16u);
    var fa2 = coopLoad<coop_mat16x16<f16, A>>(&src[512], 16u);
    var fa3 = coopLoad<coop_mat16x16<f16, A>>(&src[768], 16u);
    var fb0 = coopLoad<coop_mat16x16<f16, B>>(&src[1024], 16u);
    var fb1 = coopLoad<coop_mat16x16<f16, B>>(&src[1280], 16u);
    var fb2 = coopLoad<coop_mat16x16<f16, B>>(&src[1536], 16u);
    var fb3 = coopLoad<coop_mat16x16<f16, B>>(&src[1792], 16u);
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c02 = coop_mat16x16<f32, C>();
    var c03 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    var c12 = coop_mat16x16<f32, C>();
    var c13 = coop_mat16x16<f32, C>();
    var c20 = coop_mat16x16<f32, C>();
    var c21 = coop_mat16x16<f32, C>();
    var c22 = coop_mat16x16<f32, C>();
    var c23 = coop_mat16x16<f32, C>();
    var c30 = coop_mat16x16<f32, C>();
    var c31 = coop_mat16x16<f32, C>();
    var c32 = coop_mat16x16<f32, C>();
    var c33 = coop_mat16x16<f32, C>();
    for (var it = 0u; it < p.iters; it++) {
        let h = (it & 1u) * 2048u;
        if (MODE == 1u) {
            fa0 = coopLoad<coop_mat16x16<f16, A>>(&tile[h], 16u);
            fa1 = coopLoad<coop_mat16x16<f16, A>>(&tile[h + 256u], 16u);
            fa2 = coopLoad<coop_mat16x16<f16, A>>(&tile[h + 512u], 16u);
            fa3 = coopLoad<coop_mat16x16<f16, A>>(&tile[h + 768u], 16u);
            fb0 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1024u], 16u);
            fb1 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1280u], 16u);
            fb2 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1536u], 16u);
            fb3 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1792u], 16u);
        } else if (MODE >= 3u) {
            // Stage into the region no fragment is read from this iteration.
            if (MODE == 3u) {
                let w = 4096u + (it & 1u) * 4096u;
                for (var j = 0u; j < 32u; j++) {
                    tile[w + ((j * 32u * SG + lid) % 4096u)] = f16(1.0);
                }
            }
            workgroupBarrier();
            fa0 = coopLoad<coop_mat16x16<f16, A>>(&tile[h], 16u);
            fa1 = coopLoad<coop_mat16x16<f16, A>>(&tile[h + 256u], 16u);
            fa2 = coopLoad<coop_mat16x16<f16, A>>(&tile[h + 512u], 16u);
            fa3 = coopLoad<coop_mat16x16<f16, A>>(&tile[h + 768u], 16u);
            fb0 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1024u], 16u);
            fb1 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1280u], 16u);
            fb2 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1536u], 16u);
            fb3 = coopLoad<coop_mat16x16<f16, B>>(&tile[h + 1792u], 16u);
        } else if (MODE == 2u) {
            fa0 = coopLoad<coop_mat16x16<f16, A>>(&src[h], 16u);
            fa1 = coopLoad<coop_mat16x16<f16, A>>(&src[h + 256u], 16u);
            fa2 = coopLoad<coop_mat16x16<f16, A>>(&src[h + 512u], 16u);
            fa3 = coopLoad<coop_mat16x16<f16, A>>(&src[h + 768u], 16u);
            fb0 = coopLoad<coop_mat16x16<f16, B>>(&src[h + 1024u], 16u);
            fb1 = coopLoad<coop_mat16x16<f16, B>>(&src[h + 1280u], 16u);
            fb2 = coopLoad<coop_mat16x16<f16, B>>(&src[h + 1536u], 16u);
            fb3 = coopLoad<coop_mat16x16<f16, B>>(&src[h + 1792u], 16u);
        }
        c00 = coopMultiplyAdd(fa0, fb0, c00);
        c01 = coopMultiplyAdd(fa0, fb1, c01);
        c02 = coopMultiplyAdd(fa0, fb2, c02);
        c03 = coopMultiplyAdd(fa0, fb3, c03);
        c10 = coopMultiplyAdd(fa1, fb0, c10);
        c11 = coopMultiplyAdd(fa1, fb1, c11);
        c12 = coopMultiplyAdd(fa1, fb2, c12);
        c13 = coopMultiplyAdd(fa1, fb3, c13);
        c20 = coopMultiplyAdd(fa2, fb0, c20);
        c21 = coopMultiplyAdd(fa2, fb1, c21);
        c22 = coopMultiplyAdd(fa2, fb2, c22);
        c23 = coopMultiplyAdd(fa2, fb3, c23);
        c30 = coopMultiplyAdd(fa3, fb0, c30);
        c31 = coopMultiplyAdd(fa3, fb1, c31);
        c32 = coopMultiplyAdd(fa3, fb2, c32);
        c33 = coopMultiplyAdd(fa3, fb3, c33);
    }
    let base = (wg.x * SG + lid / 32u) * 4096u;
    coopStore(c00, &dst[base], 16u);
    coopStore(c01, &dst[base + 256u], 16u);
    coopStore(c02, &dst[base + 512u], 16u);
    coopStore(c03, &dst[base + 768u], 16u);
    coopStore(c10, &dst[base + 1024u], 16u);
    coopStore(c11, &dst[base + 1280u], 16u);
    coopStore(c12, &dst[base + 1536u], 16u);
    coopStore(c13, &dst[base + 1792u], 16u);
    coopStore(c20, &dst[base + 2048u], 16u);
    coopStore(c21, &dst[base + 2304u], 16u);
    coopStore(c22, &dst[base + 2560u], 16u);
    coopStore(c23, &dst[base + 2816u], 16u);
    coopStore(c30, &dst[base + 3072u], 16u);
    coopStore(c31, &dst[base + 3328u], 16u);
    coopStore(c32, &dst[base + 3584u], 16u);
    coopStore(c33, &dst[base + 3840u], 16u);
}
