// One K step of gemm_khr_wide.comp's loop (included there once, or twice
// with PAR 0 and 1 under UNROLL2): step t's fragments multiplied from its
// staging buffer while the next step's tiles are loaded and staged.
#if STAGES == 2 && defined(PAR)
    uint cur_a = PAR * STAGE8_A;
    uint cur_b = PAR * STAGE8_B;
#elif STAGES == 2
    uint cur_a = (t & 1u) * STAGE8_A;
    uint cur_b = (t & 1u) * STAGE8_B;
#else
    uint cur_a = 0u;
    uint cur_b = 0u;
    // The previous step's fragment loads are done before the tiles change.
    barrier();
    if (store_tiles) {
        [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
            ta[stage_at(lid + l * THREADS, A_T == 0, BM)] = ra[l];
        }
        [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
            tb[stage_at(lid + l * THREADS, B_T == 1, BN)] = rb[l];
        }
    }
    barrier();
#endif
    bool more = t + 1u < steps;
#if (DIAG & 1) == 0
    if (more) {
        uint kt = k0 + (t + 1u) * BK_;
        [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
            ra[l] = LOAD_A(l, kt);
        }
        [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
            rb[l] = LOAD_B(l, kt);
        }
    }
#endif
    [[unroll]] for (uint kk = 0u; kk < BK_; kk += 16u) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> fa[FM];
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> fb[FN];
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
    // closing barrier: it takes the next tiles now.
    if (more && store_tiles) {
        [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
            ta[STAGE8_A - cur_a + stage_at(lid + l * THREADS, A_T == 0, BM)] = ra[l];
        }
        [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
            tb[STAGE8_B - cur_b + stage_at(lid + l * THREADS, B_T == 1, BN)] = rb[l];
        }
    }
    barrier();
#endif
