// The K loop of the KHR GEMM kernels (gemm_coop_khr.comp and
// gemm_khr_wide.comp), included in their main() twice: with GUARDED 1 for
// blocks that cross M or N or whose K run ends inside a step (loads zero
// past them), with GUARDED 0 for whole blocks (loads unchecked). The
// includer's LOAD_A and LOAD_B read GUARDED; it declares acc, lid, k0,
// k_end, sub_row, sub_col, the staging buffers and their layout constants.
// STAGES 1: one staging buffer, two barriers a step; 2: two, one barrier.
{
    // This invocation's share of the next A and B tiles, fetched a step ahead.
    uvec4 ra[REGS_A];
    uvec4 rb[REGS_B];
    [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
        ra[l] = LOAD_A(l, k0);
    }
    [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
        rb[l] = LOAD_B(l, k0);
    }
#if STAGES == 2
    [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
        ta[stage_at(lid + l * THREADS, A_T == 0, BM)] = ra[l];
    }
    [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
        tb[stage_at(lid + l * THREADS, B_T == 1, BN)] = rb[l];
    }
    barrier();
#endif

    uint steps = (k_end - k0 + BK - 1u) / BK;
    for (uint t = 0u; t < steps; t++) {
#if STAGES == 2
        uint cur_a = (t & 1u) * STAGE8_A;
        uint cur_b = (t & 1u) * STAGE8_B;
#else
        // The previous step's fragment loads are done before the tiles change.
        uint cur_a = 0u;
        uint cur_b = 0u;
        barrier();
        [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
            ta[stage_at(lid + l * THREADS, A_T == 0, BM)] = ra[l];
        }
        [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
            tb[stage_at(lid + l * THREADS, B_T == 1, BN)] = rb[l];
        }
        barrier();
#endif
        bool more = t + 1u < steps;
        if (more) {
            uint kt = k0 + (t + 1u) * BK;
            [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
                ra[l] = LOAD_A(l, kt);
            }
            [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
                rb[l] = LOAD_B(l, kt);
            }
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            coopmat<IN_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> fa[FM];
            coopmat<IN_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> fb[FN];
            [[unroll]] for (uint i = 0u; i < FM; i++) {
#if A_T
                coopMatLoad(fa[i], ta, cur_a + kk * MN_STRIDE8_A + (sub_row + 16u * i) / 8u, MN_STRIDE8_A,
                            gl_CooperativeMatrixLayoutColumnMajor);
#else
                coopMatLoad(fa[i], ta, cur_a + (sub_row + 16u * i) * K_STRIDE8 + kk / 8u, K_STRIDE8,
                            gl_CooperativeMatrixLayoutRowMajor);
#endif
            }
            [[unroll]] for (uint j = 0u; j < FN; j++) {
#if B_T
                coopMatLoad(fb[j], tb, cur_b + (sub_col + 16u * j) * K_STRIDE8 + kk / 8u, K_STRIDE8,
                            gl_CooperativeMatrixLayoutColumnMajor);
#else
                coopMatLoad(fb[j], tb, cur_b + kk * MN_STRIDE8_B + (sub_col + 16u * j) / 8u, MN_STRIDE8_B,
                            gl_CooperativeMatrixLayoutRowMajor);
#endif
            }
            [[unroll]] for (uint i = 0u; i < FM; i++) {
                [[unroll]] for (uint j = 0u; j < FN; j++) {
                    acc[i * FN + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FN + j]);
                }
            }
        }
#if STAGES == 2
        // The other buffer was last read in the previous step, before its
        // closing barrier: it can take the next tiles now.
        if (more) {
            [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
                ta[STAGE8_A - cur_a + stage_at(lid + l * THREADS, A_T == 0, BM)] = ra[l];
            }
            [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
                tb[STAGE8_B - cur_b + stage_at(lid + l * THREADS, B_T == 1, BN)] = rb[l];
            }
        }
        barrier();
#endif
    }
}
