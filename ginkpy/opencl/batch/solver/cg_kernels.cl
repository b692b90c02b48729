// The batched Cg: one work-group solves one item at a time (see components/batch_solver.cl for the
// build options, the work space and the row macros). Mirrors reference/batch/solver/cg_kernels.py.
#include "components/batch_solver.cl"

__kernel void apply(BATCH_SOLVER_ARGS)
{
    const int lid = WG == 1 ? 0 : get_local_id(0);
    for (int item = get_group_id(0); item < num_items; item += get_num_groups(0)) {
        BEGIN_ITEM
        WORK(p, n);
        WORK(ap, n);
        WORK(r, n);
        WORK(z, n);
        SYNC();
        // r = b - A x;  ||r||, ||b||, sum |x|
        #define STORE_R(i, ri) r[i] = ri
        START_ITEM(STORE_R)
        #undef STORE_R
        // z = M r;  p = z;  rho = r . z
        s0 = 0;
        FOR_ROWS(i) {
            value_type zi;
            PREC_ROW(zi, r, i);
            z[i] = zi;
            p[i] = zi;
            s0 += r[i] * zi;
        }
        value_type rho = SUM4(s0, 0, 0, 0).s0;
        int it = reason == STATUS_DIVERGED ? -1 : 0;  // -1: bad input, reported as such
        if (reason == STATUS_RUNNING && max_iters == 0) reason = STATUS_ITERATION_LIMIT;
        // one iteration per trip; the loop has no other exit (PoCL mishandles barrier loops with
        // several)
        while (reason == STATUS_RUNNING) {
            // ap = A p;  p . ap;  sum |p|
            s0 = 0;
            s1 = 0;
            FOR_ROWS(i) {
                value_type api;
                SPMV_ROW(api, p, i);
                ap[i] = api;
                s0 += p[i] * api;
                s1 += fabs(p[i]);
            }
            sums = SUM4(s0, s1, 0, 0);
            const value_type pap = sums.s0;
            const value_type alpha = rho / pap;
            if (!(pap > 0) || !isfinite(pap) || !isfinite(rho) || rho == 0 || !isfinite(alpha)) {
                reason = STATUS_BREAKDOWN;
            } else if (!isfinite(x_sum + fabs(alpha) * sums.s1)) {
                // x + alpha p would not stay finite: |x_i + alpha p_i| <= sum |x| + |alpha| sum |p|
                reason = STATUS_DIVERGED;
            } else {
                // x += alpha p;  r -= alpha ap;  z = M r;  rho_new = r . z;  ||r||;  sum |x|
                s0 = 0;
                s1 = 0;
                s2 = 0;
#if PRECOND == PRECOND_BLOCK
                FOR_ROWS(i) {
                    const value_type xi = xv[i] + alpha * p[i];
                    xv[i] = xi;
                    const value_type ri = r[i] - alpha * ap[i];
                    r[i] = ri;
                    s1 += ri * ri;
                    s2 += fabs(xi);
                }
                SYNC();
                FOR_ROWS(i) {
                    value_type zi;
                    PREC_ROW(zi, r, i);
                    z[i] = zi;
                    s0 += r[i] * zi;
                }
#else
                FOR_ROWS(i) {
                    const value_type xi = xv[i] + alpha * p[i];
                    xv[i] = xi;
                    const value_type ri = r[i] - alpha * ap[i];
                    r[i] = ri;
                    value_type zi;
                    PREC_ROW(zi, r, i);
                    z[i] = zi;
                    s0 += ri * zi;
                    s1 += ri * ri;
                    s2 += fabs(xi);
                }
#endif
                sums = SUM4(s0, s1, s2, 0);
                value_type rho_new = sums.s0;
                res = sqrt(sums.s1);
                x_sum = sums.s2;
                ++it;
                if (!isfinite(res)) {
                    reason = STATUS_DIVERGED;
                } else if (res <= limit) {
                    // converged only if the true residual t = b - A x (into ap) meets the tolerance too
                    s0 = 0;
                    FOR_ROWS(i) {
                        value_type ax;
                        SPMV_ROW(ax, xv, i);
                        const value_type ti = bv[i] - ax;
                        ap[i] = ti;
                        s0 += ti * ti;
                    }
                    res = sqrt(SUM4(s0, 0, 0, 0).s0);
                    if (res <= limit) {
                        reason = STATUS_CONVERGED;
                    } else {
                        // residual replacement: r = t;  z = M r;  rho_new = r . z
                        FOR_ROWS(i) r[i] = ap[i];
                        SYNC();
                        s0 = 0;
                        FOR_ROWS(i) {
                            value_type zi;
                            PREC_ROW(zi, r, i);
                            z[i] = zi;
                            s0 += r[i] * zi;
                        }
                        rho_new = SUM4(s0, 0, 0, 0).s0;
                    }
                }
                if (reason == STATUS_RUNNING) {
                    // p = z + (rho_new / rho) p
                    const value_type beta = rho_new / rho;
                    FOR_ROWS(i) p[i] = z[i] + beta * p[i];
                    rho = rho_new;
                    SYNC();
                    if (it >= max_iters) reason = STATUS_ITERATION_LIMIT;
                }
            }
        }
        STORE_X
        FINISH(it, res, reason)
        SYNC();
    }
}
