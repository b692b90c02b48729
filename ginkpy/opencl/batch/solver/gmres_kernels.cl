// The batched Gmres: one work-group solves one item at a time (see components/batch_solver.cl for
// the build options, the work space and the row macros). Mirrors reference/batch/solver/gmres_kernels.py.
// The Givens rotations and the triangular solve run on one work-item (LEADER) between barriers.
#include "components/batch_solver.cl"

// hs holds the Hessenberg matrix H ((m + 1) x m, column-major), the rotations cs and sn (m each),
// g (m + 1), y (m) and the number of usable steps; V holds the basis vectors v_0 .. v_m.
#define H(l, j) hs[(l) + (m + 1) * (j)]
#define CS(l) hs[(m + 1) * m + (l)]
#define SN(l) hs[(m + 1) * m + m + (l)]
#define G(l) hs[(m + 1) * m + 2 * m + (l)]
#define Y(l) hs[(m + 1) * m + 3 * m + 1 + (l)]
#define STEPS hs[(m + 1) * m + 4 * m + 1]
#define VEC(l) (V + (l) * n)

__kernel void apply(BATCH_SOLVER_ARGS, const int m)
{
    const int lid = WG == 1 ? 0 : get_local_id(0);
    for (int item = get_group_id(0); item < num_items; item += get_num_groups(0)) {
        BEGIN_ITEM
        WORK(hs, (m + 1) * m + 4 * m + 2);
        WORK(w, n);
        WORK(z, n);
        WORK(V, (m + 1) * n);
        SYNC();
        // r = b - A x (into v_0);  ||r||, ||b||, sum |x|
        #define STORE_V0(i, ri) V[i] = ri
        START_ITEM(STORE_V0)
        #undef STORE_V0
        if (reason == STATUS_RUNNING && max_iters == 0) reason = STATUS_ITERATION_LIMIT;
        int it = reason == STATUS_DIVERGED ? -1 : 0;  // -1: bad input, reported as such
        // one restart cycle per trip; the loop has no other exit (PoCL mishandles some barrier
        // loops with several)
        while (reason == STATUS_RUNNING) {
            // v_0 = r / ||r||;  g = ||r|| e_1
            FOR_ROWS(i) V[i] = V[i] / res;
            if (LEADER) G(0) = res;
            SYNC();
            int breakdown = 0, steps = 0, cycle_done = 0;
            for (int j = 0; j < m && !cycle_done; ++j) {
                // z = M v_j;  w = A z
                FOR_ROWS(i) {
                    value_type zi;
                    PREC_ROW(zi, VEC(j), i);
                    z[i] = zi;
                }
                SYNC();
                // w = A z;  h_0j = w . v_0
                s0 = 0;
                FOR_ROWS(i) {
                    value_type wi;
                    SPMV_ROW(wi, z, i);
                    w[i] = wi;
                    s0 += wi * V[i];
                }
                value_type h = SUM4(s0, 0, 0, 0).s0;
                if (LEADER) H(0, j) = h;
                // modified Gram-Schmidt: w -= h_{l-1,j} v_{l-1} fused with h_lj = w . v_l, the last
                // pass with ||w||^2 (a loop of at least one pass: PoCL mishandles a barrier loop
                // that runs zero times)
                for (int l = 1; l <= j + 1; ++l) {
                    s0 = 0;
                    FOR_ROWS(i) {
                        const value_type wi = w[i] - h * VEC(l - 1)[i];
                        w[i] = wi;
                        s0 += wi * (l <= j ? VEC(l)[i] : wi);
                    }
                    h = SUM4(s0, 0, 0, 0).s0;
                    if (l <= j && LEADER) H(l, j) = h;
                }
                const value_type h_next = sqrt(h);
                ++it;
                breakdown = !isfinite(h_next);
                if (LEADER && !breakdown) {
                    // the previous rotations on column j, then the one that zeroes h_{j+1,j}
                    for (int l = 0; l < j; ++l) {
                        const value_type upper = H(l, j), lower = H(l + 1, j);
                        H(l, j) = CS(l) * upper + SN(l) * lower;
                        H(l + 1, j) = -SN(l) * upper + CS(l) * lower;
                    }
                    const value_type diag = H(j, j);
                    const value_type d = hypot(diag, h_next);
                    const value_type c = d != 0 ? diag / d : 1;
                    const value_type s = d != 0 ? h_next / d : 0;
                    CS(j) = c;
                    SN(j) = s;
                    H(j, j) = c * diag + s * h_next;
                    H(j + 1, j) = 0;
                    G(j + 1) = -s * G(j);
                    G(j) = c * G(j);
                }
                steps = breakdown ? j : j + 1;
                // v_{j+1} = w / h_{j+1,j}
                if (h_next > 0 && !breakdown) {
                    FOR_ROWS(i) VEC(j + 1)[i] = w[i] / h_next;
                }
                SYNC();
                cycle_done = breakdown || fabs(G(j + 1)) <= limit || it >= max_iters || h_next == 0;
            }
            // y = R^-1 g over the leading steps whose diagonal is nonzero
            if (LEADER) {
                int usable = steps;
                for (int l = 0; l < steps; ++l) {
                    if (H(l, l) == 0 || !isfinite(H(l, l))) {
                        usable = l;
                        break;
                    }
                }
                for (int l = usable - 1; l >= 0; --l) {
                    value_type acc = G(l);
                    for (int c = l + 1; c < usable; ++c) acc -= H(l, c) * Y(c);
                    Y(l) = acc / H(l, l);
                }
                STEPS = usable;
            }
            SYNC();
            const int usable = (int)STEPS;
            if (usable < steps) breakdown = 1;
            // w = V y;  z = M w;  sum |z|
            FOR_ROWS(i) {
                value_type acc = 0;
                for (int l = 0; l < usable; ++l) acc += VEC(l)[i] * Y(l);
                w[i] = acc;
            }
#if PRECOND == PRECOND_BLOCK
            SYNC();
#endif
            s0 = 0;
            FOR_ROWS(i) {
                value_type zi;
                PREC_ROW(zi, w, i);
                z[i] = zi;
                s0 += fabs(zi);
            }
            const value_type z_sum = SUM4(s0, 0, 0, 0).s0;
            const int diverged = !isfinite(x_sum + z_sum);
            // x += z, unless x would not stay finite
            if (!diverged) {
                FOR_ROWS(i) xv[i] += z[i];
            }
            SYNC();
            // r = b - A x (into v_0): the true residual decides
            s0 = 0;
            s2 = 0;
            FOR_ROWS(i) {
                value_type ax;
                SPMV_ROW(ax, xv, i);
                const value_type ri = bv[i] - ax;
                V[i] = ri;
                s0 += ri * ri;
                s2 += fabs(xv[i]);
            }
            sums = SUM4(s0, 0, s2, 0);
            res = sqrt(sums.s0);
            x_sum = sums.s2;
            if (diverged) {
                reason = STATUS_DIVERGED;
            } else if (res <= limit) {
                reason = STATUS_CONVERGED;
            } else if (breakdown) {
                reason = STATUS_BREAKDOWN;
            } else if (!isfinite(res)) {
                reason = STATUS_DIVERGED;
            } else if (it >= max_iters) {
                reason = STATUS_ITERATION_LIMIT;
            }
        }
        STORE_X
        FINISH(it, res, reason)
        SYNC();
    }
}
