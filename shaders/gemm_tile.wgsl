// Fragment: the GEMM micro-kernel shared by matmul.wgsl and conv.wgsl (their
// kernel families compile that file followed by this one).
//
// A workgroup of 16x16 threads computes a BM x BN tile of C, BM = 64 * RM and
// BN = 64 * RN; each thread holds (4*RM) x (4*RN) results in registers. K is
// walked BK at a time through workgroup memory, A stored transposed
// (k-major) so that both tiles are read as vec4 rows. A thread's rows are
// ty*4 + r + i*64 and its columns tx*4 + c + j*64, so a subgroup reads
// consecutive vec4s of B and broadcasts A. The including file loads the
// tiles (into registers, then into As and Bs) and writes the results.
//
// Every loop bound is an override, a constant when the pipeline is created,
// so drivers unroll them. Function-scope arrays need const sizes: they are
// declared for the largest tile (RM = RN = 2, A_LOADS = B_LOADS = 8) and
// only their first elements are used.

// Register blocking: 1 or 2 blocks of 64 rows (RM) and columns (RN).
override RM: u32 = 1u;
override RN: u32 = 1u;
// K per staged step: measured on an H200, 8 suits 128x128 tiles, 16 the smaller ones.
override BK: u32 = select(16u, 8u, RM * RN == 4u);
override BM: u32 = 64u * RM;
override BN: u32 = 64u * RN;
// Elements of A and B each of the 256 threads loads per step.
override A_LOADS: u32 = BM * BK / 256u;
override B_LOADS: u32 = BN * BK / 256u;
// One vec4 of padding per k row keeps the transposing stores from all
// landing in one memory bank.
override A_ROW: u32 = BM / 4u + 1u;
override B_ROW: u32 = BN / 4u + 1u;
// Workgroup array sizes must be single identifiers (naga names their override).
override A_VECS: u32 = BK * A_ROW;
override B_VECS: u32 = BK * B_ROW;

const MAX_LOADS: u32 = 8u;
alias Loads = array<f32, MAX_LOADS>;
alias Acc = array<array<vec4<f32>, 2>, 8>;

var<workgroup> As: array<vec4<f32>, A_VECS>;
var<workgroup> Bs: array<vec4<f32>, B_VECS>;

// The products of the staged BK step, added to `acc`.
fn multiply_staged(tx: u32, ty: u32, acc: ptr<function, Acc>) {
    for (var kk = 0u; kk < BK; kk++) {
        var av: array<vec4<f32>, 2>;
        var bv: array<vec4<f32>, 2>;
        for (var i = 0u; i < RM; i++) {
            av[i] = As[kk * A_ROW + i * 16u + ty];
        }
        for (var j = 0u; j < RN; j++) {
            bv[j] = Bs[kk * B_ROW + j * 16u + tx];
        }
        for (var i = 0u; i < RM; i++) {
            for (var r = 0u; r < 4u; r++) {
                let s = av[i][r];
                for (var j = 0u; j < RN; j++) {
                    (*acc)[i * 4u + r][j] = fma(vec4<f32>(s), bv[j], (*acc)[i * 4u + r][j]);
                }
            }
        }
    }
}
