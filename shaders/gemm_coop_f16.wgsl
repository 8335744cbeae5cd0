// f16 x f16 -> f32 GEMM on cooperative matrices (tensor cores).
// C[b] = A[b] (M x K, row-major) * B[b] (K x N, row-major), C row-major f32.
// Each subgroup (32 invocations) computes a {{SM}}x{{SN}} block of C as
// 16x16 fragments accumulated in f32; {{SGM}}x{{SGN}} subgroups tile the
// workgroup's block. Fragments are loaded straight from storage: the driver
// turns these into wide loads and L1 serves the reuse between subgroups.
// The host only uses this kernel when M % (SM*SGM) == 0, N % (SN*SGN) == 0,
// K % 16 == 0 and the subgroup size is 32, so no fragment crosses an edge.
enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    batch_a: u32, // element stride between batches (0: broadcast)
    batch_b: u32,
    batch_c: u32,
    offset_a: u32,
    offset_b: u32,
    offset_c: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f16>;
@group(0) @binding(1) var<storage, read> b: array<f16>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size({{THREADS}})
fn gemm_coop_f16(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let sg = lid / 32u;
    let row0 = wg.y * ({{SM}}u * {{SGM}}u) + (sg / {{SGN}}u) * {{SM}}u;
    let col0 = wg.x * ({{SN}}u * {{SGN}}u) + (sg % {{SGN}}u) * {{SN}}u;
    let oa = p.offset_a + wg.z * p.batch_a + row0 * p.k;
    let ob = p.offset_b + wg.z * p.batch_b + col0;
    let oc = p.offset_c + wg.z * p.batch_c + row0 * p.n + col0;
    // Strides as plain values: the SPIR-V writer needs them evaluated
    // before the cooperative loads that use them.
    let ks = p.k;
    let ns = p.n;
{{DECL}}
    for (var kk = 0u; kk < p.k; kk += 16u) {
{{BODY}}
    }
{{STORE}}
}
