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
        #define UPDATE(i)
        #define USE(i, zi) z[i] = zi; p[i] = zi; s0 += mul_conj(r[i], zi);
        UPDATE_THEN_PRECONDITION(r, UPDATE, USE)
        #undef UPDATE
        #undef USE
        value_type rho = SUM_AT(SUM4(s0, 0, 0, 0), 0);
        int it = reason == STATUS_DIVERGED ? -1 : 0;  // -1: bad input, reported as such
        if (reason == STATUS_RUNNING && max_iters == 0) reason = STATUS_ITERATION_LIMIT;
        // one iteration per trip; the loop has no other exit (PoCL mishandles barrier loops with
        // several)
        while (reason == STATUS_RUNNING) {
            // ap = A p;  p . ap;  sum |p|
            s0 = 0;
            s1 = 0;
            #define USE(i, api) s0 += mul_conj(p[i], api); s1 += to_value(abs_value(p[i]));
            MULTIPLY_ROWS(ap, p, USE)
            #undef USE
            sums = SUM4(s0, s1, 0, 0);
            const value_type pap = SUM_AT(sums, 0);
            const value_type alpha = divide(rho, pap);
            // x_sum bounds sum |x| (it grows by |alpha| sum |p| each step: no sum over x per iteration)
            const real_type x_bound = x_sum + abs_value(alpha) * real_part(SUM_AT(sums, 1));
            if (!(real_part(pap) > 0) || !is_finite_value(pap) || !is_finite_value(rho) || is_zero(rho)
                || !is_finite_value(alpha)) {
                reason = STATUS_BREAKDOWN;
            } else if (!isfinite(x_bound)) {
                // x + alpha p might not stay finite: |x_i + alpha p_i| <= sum |x| + |alpha| sum |p|
                reason = STATUS_DIVERGED;
            } else {
                // x += alpha p;  r -= alpha ap;  z = M r;  rho_new = r . z;  ||r||
                s0 = 0;
                s1 = 0;
                x_sum = x_bound;
                #define UPDATE(i) xv[i] = xv[i] + mul(alpha, p[i]); const value_type ri = r[i] - mul(alpha, ap[i]); \
                                  r[i] = ri; s1 += to_value(abs2(ri));
                #define USE(i, zi) z[i] = zi; s0 += mul_conj(r[i], zi);
                UPDATE_THEN_PRECONDITION(r, UPDATE, USE)
                #undef UPDATE
                #undef USE
                sums = SUM4(s0, s1, 0, 0);
                value_type rho_new = SUM_AT(sums, 0);
                res = sqrt(real_part(SUM_AT(sums, 1)));
                ++it;
                if (!isfinite(res)) {
                    reason = STATUS_DIVERGED;
                } else if (res <= limit) {
                    // converged only if the true residual t = b - A x (into ap) meets the tolerance too
                    s0 = 0;
                    #define STORE_T(i, ti) ap[i] = ti
                    RESIDUAL_ROWS(STORE_T, NO_MORE)
                    #undef STORE_T
                    res = sqrt(real_part(SUM_AT(SUM4(s0, 0, 0, 0), 0)));
                    if (res <= limit) {
                        reason = STATUS_CONVERGED;
                    } else {
                        // residual replacement: r = t;  z = M r;  rho_new = r . z
                        s0 = 0;
                        #define UPDATE(i) r[i] = ap[i];
                        #define USE(i, zi) z[i] = zi; s0 += mul_conj(r[i], zi);
                        UPDATE_THEN_PRECONDITION(r, UPDATE, USE)
                        #undef UPDATE
                        #undef USE
                        rho_new = SUM_AT(SUM4(s0, 0, 0, 0), 0);
                    }
                }
                if (reason == STATUS_RUNNING) {
                    // p = z + (rho_new / rho) p
                    const value_type beta = divide(rho_new, rho);
                    FOR_ROWS(i) p[i] = z[i] + mul(beta, p[i]);
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
