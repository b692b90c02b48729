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
        if (reason == STATUS_RUNNING && max_iters == 0) reason = STATUS_ITERATION_LIMIT;
        int it = reason == STATUS_DIVERGED ? -1 : 0;  // -1: bad input, reported as such
        // one restart cycle per trip; the loop has no other exit (PoCL mishandles some barrier
        // loops with several)
        while (reason == STATUS_RUNNING) {
            // v_0 = r / ||r||;  g = ||r|| e_1
            FOR_ROWS(i) V[i] = V[i] / res;
            if (LEADER) G(0) = to_value(res);
            SYNC();
            int breakdown = 0, steps = 0, cycle_done = 0;
            for (int j = 0; j < m && !cycle_done; ++j) {
                // z = M v_j;  w = A z
                PREC_PREPARE(VEC(j));
                FOR_ROWS(i) {
                    value_type zi;
                    PREC_ROW(zi, VEC(j), i);
                    z[i] = zi;
                }
                SYNC();
                // w = A z;  h_0j = v_0^H w
                s0 = 0;
                #define USE(i, wi) s0 += mul_conj(V[i], wi);
                MULTIPLY_ROWS(w, z, USE)
                #undef USE
                value_type h = SUM_AT(SUM4(s0, 0, 0, 0), 0);
                if (LEADER) H(0, j) = h;
                // modified Gram-Schmidt: w -= h_{l-1,j} v_{l-1} fused with h_lj = v_l^H w, the last
                // pass with ||w||^2 (a loop of at least one pass: PoCL mishandles a barrier loop
                // that runs zero times)
                for (int l = 1; l <= j + 1; ++l) {
                    s0 = 0;
                    FOR_ROWS(i) {
                        const value_type wi = w[i] - mul(h, VEC(l - 1)[i]);
                        w[i] = wi;
                        s0 += mul_conj(l <= j ? VEC(l)[i] : wi, wi);
                    }
                    h = SUM_AT(SUM4(s0, 0, 0, 0), 0);
                    if (l <= j && LEADER) H(l, j) = h;
                }
                const real_type h_next = sqrt(real_part(h));
                ++it;
                breakdown = !isfinite(h_next);
                if (LEADER && !breakdown) {
                    // the previous rotations on column j, then the one that zeroes h_{j+1,j}; a
                    // rotation is [c s; -conj(s) conj(c)] with c = conj(a) / d, s = conj(b) / d,
                    // d = sqrt(|a|^2 + |b|^2) (for real values the usual [c s; -s c])
                    for (int l = 0; l < j; ++l) {
                        const value_type upper = H(l, j), lower = H(l + 1, j);
                        H(l, j) = mul(CS(l), upper) + mul(SN(l), lower);
                        H(l + 1, j) = -mul(conj_value(SN(l)), upper) + mul(conj_value(CS(l)), lower);
                    }
                    const value_type diag = H(j, j);
                    const real_type d = hypot(abs_value(diag), h_next);
                    const value_type c = d != 0 ? conj_value(diag) / d : to_value(1);
                    const value_type s = to_value(d != 0 ? h_next / d : 0);
                    CS(j) = c;
                    SN(j) = s;
                    H(j, j) = mul(c, diag) + s * h_next;
                    H(j + 1, j) = 0;
                    G(j + 1) = -mul(conj_value(s), G(j));
                    G(j) = mul(c, G(j));
                }
                steps = breakdown ? j : j + 1;
                // v_{j+1} = w / h_{j+1,j}
                if (h_next > 0 && !breakdown) {
                    FOR_ROWS(i) VEC(j + 1)[i] = w[i] / h_next;
                }
                SYNC();
                cycle_done = breakdown || abs_value(G(j + 1)) <= limit || it >= max_iters || h_next == 0;
            }
            // y = R^-1 g over the leading steps whose diagonal is nonzero
            if (LEADER) {
                int usable = steps;
                for (int l = 0; l < steps; ++l) {
                    if (is_zero(H(l, l)) || !is_finite_value(H(l, l))) {
                        usable = l;
                        break;
                    }
                }
                for (int l = usable - 1; l >= 0; --l) {
                    value_type acc = G(l);
                    for (int c = l + 1; c < usable; ++c) acc -= mul(H(l, c), Y(c));
                    Y(l) = divide(acc, H(l, l));
                }
                STEPS = to_value(usable);
            }
            SYNC();
            const int usable = (int)real_part(STEPS);
            if (usable < steps) breakdown = 1;
            // w = V y;  z = M w;  sum |z|
            FOR_ROWS(i) {
                value_type acc = 0;
                for (int l = 0; l < usable; ++l) acc += mul(VEC(l)[i], Y(l));
                w[i] = acc;
            }
#if PREC_SYNC
            SYNC();
            PREC_PREPARE(w);
#endif
            s0 = 0;
            FOR_ROWS(i) {
                value_type zi;
                PREC_ROW(zi, w, i);
                z[i] = zi;
                s0 += to_value(abs_value(zi));
            }
            const real_type z_sum = real_part(SUM_AT(SUM4(s0, 0, 0, 0), 0));
            const int diverged = !isfinite(x_sum + z_sum);
            // x += z, unless x would not stay finite
            if (!diverged) {
                FOR_ROWS(i) xv[i] += z[i];
            }
            SYNC();
            // r = b - A x (into v_0): the true residual decides
            s0 = 0;
            s2 = 0;
            RESIDUAL_ROWS(STORE_V0, X_SUM)
            sums = SUM4(s0, 0, s2, 0);
            res = sqrt(real_part(SUM_AT(sums, 0)));
            x_sum = real_part(SUM_AT(sums, 2));
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
        #undef STORE_V0
        STORE_X
        FINISH(it, res, reason)
        SYNC();
    }
}
