// The batched Bicgstab: one work-group solves one item at a time (see components/batch_solver.cl
// for the build options, the work space and the row macros). Mirrors
// reference/batch/solver/bicgstab_kernels.py.
#include "components/batch_solver.cl"

#if PRECOND == PRECOND_NONE  // M = I: p_hat is p, s_hat is s
#define p_hat p
#define s_hat s
#endif

__kernel void apply(BATCH_SOLVER_ARGS)
{
    const int lid = WG == 1 ? 0 : get_local_id(0);
    for (int item = get_group_id(0); item < num_items; item += get_num_groups(0)) {
        BEGIN_ITEM
#if PRECOND != PRECOND_NONE
        WORK(p_hat, n);
        WORK(s_hat, n);
#endif
        WORK(r, n);
        WORK(s, n);
        WORK(v, n);
        WORK(t, n);
        WORK(r_hat, n);
        WORK(p, n);
        SYNC();
        // r = r_hat = b - A x;  p = v = 0;  ||r||, ||b||, sum |x|
        #define STORE_R(i, ri) r[i] = ri; r_hat[i] = ri; p[i] = 0; v[i] = 0
        START_ITEM(STORE_R)
        value_type rho_old = to_value(1), alpha = to_value(1), omega = to_value(1);
        value_type rho = SUM_AT(sums, 0);  // r_hat^H r
        real_type rhat_norm = res;  // ||r_hat||
        int it = reason == STATUS_DIVERGED ? -1 : 0;  // -1: bad input, reported as such
        if (reason == STATUS_RUNNING && max_iters == 0) reason = STATUS_ITERATION_LIMIT;
        // one iteration per trip; the loop has no other exit (PoCL mishandles barrier loops with
        // several)
        while (reason == STATUS_RUNNING) {
            // restart where r_hat is numerically orthogonal to r, as Bicgstab (core/solver/bicgstab.py)
            const int restart = is_finite_value(rho) && abs_value(rho) <= 100 * EPSILON * rhat_norm * res;
            if (!is_finite_value(rho) || (is_zero(omega) && !restart)) {
                reason = STATUS_BREAKDOWN;
            } else {
                // restart: r_hat = p = r, rho = r . r;  else p = r + beta (p - omega v);
                // p_hat = M p;  sum |p_hat|
                const value_type beta = restart ? 0 : mul(divide(rho, rho_old), divide(alpha, omega));
                if (restart) {
                    rho = to_value(res * res);
                    rhat_norm = res;
                }
                s0 = 0;
                #define UPDATE(i) if (restart) r_hat[i] = r[i]; p[i] = restart ? r[i] : r[i] + mul(beta, p[i] - mul(omega, v[i]));
                #define USE(i, pi) p_hat[i] = pi; s0 += to_value(abs_value(pi));
                UPDATE_THEN_PRECONDITION(p, UPDATE, USE)
                #undef UPDATE
                #undef USE
                const real_type p_sum = real_part(SUM_AT(SUM4(s0, 0, 0, 0), 0));
                // v = A p_hat;  alpha = rho / (r_hat . v)
                s0 = 0;
                #define USE(i, vi) s0 += mul_conj(r_hat[i], vi);
                MULTIPLY_ROWS(v, p_hat, USE)
                #undef USE
                const value_type rv = SUM_AT(SUM4(s0, 0, 0, 0), 0);
                if (is_zero(rv) || !is_finite_value(rv) || !is_finite_value(divide(rho, rv))) {
                    reason = STATUS_BREAKDOWN;
                } else {
                    alpha = divide(rho, rv);
                    // s = r - alpha v;  s_hat = M s;  ||s||;  sum |s_hat|
                    s0 = 0;
                    s1 = 0;
                    #define UPDATE(i) const value_type si = r[i] - mul(alpha, v[i]); s[i] = si; s0 += to_value(abs2(si));
                    #define USE(i, shi) s_hat[i] = shi; s1 += to_value(abs_value(shi));
                    UPDATE_THEN_PRECONDITION(s, UPDATE, USE)
                    #undef UPDATE
                    #undef USE
                    sums = SUM4(s0, s1, 0, 0);
                    const real_type s_res = sqrt(real_part(SUM_AT(sums, 0)));
                    const real_type s_sum = real_part(SUM_AT(sums, 1));
                    ++it;
                    int check = 0;  // the recurrence says converged: the true residual decides
                    if (s_res <= limit) {
                        // x += alpha p_hat, if it stays finite (x_sum bounds sum |x|: it grows by
                        // the step's sum |alpha p_hat|, no sum over x)
                        const real_type x_bound = x_sum + abs_value(alpha) * p_sum;
                        if (!isfinite(x_bound)) {
                            reason = STATUS_DIVERGED;
                        } else {
                            FOR_ROWS(i) xv[i] = xv[i] + mul(alpha, p_hat[i]);
                            SYNC();  // the true residual reads every row of x
                            x_sum = x_bound;
                            check = 1;
                        }
                    } else {
                        // t = A s_hat;  omega = (t^H s) / (t^H t)
                        s0 = 0;
                        s1 = 0;
                        #define USE(i, ti) s0 += mul_conj(ti, s[i]); s1 += to_value(abs2(ti));
                        MULTIPLY_ROWS(t, s_hat, USE)
                        #undef USE
                        sums = SUM4(s0, s1, 0, 0);
                        const value_type ts = SUM_AT(sums, 0);
                        const real_type tt = real_part(SUM_AT(sums, 1));
                        if (tt == 0 || !isfinite(tt) || !is_finite_value(ts / tt)) {
                            reason = STATUS_BREAKDOWN;
                        } else if (!isfinite(x_sum + abs_value(alpha) * p_sum + abs_value(ts / tt) * s_sum)) {
                            reason = STATUS_DIVERGED;
                        } else {
                            omega = ts / tt;
                            // x += alpha p_hat + omega s_hat;  r = s - omega t;  ||r||;
                            // rho_new = r_hat . r;  the bound of sum |x| grows by the step's
                            x_sum += abs_value(alpha) * p_sum + abs_value(omega) * s_sum;
                            s0 = 0;
                            s1 = 0;
                            FOR_ROWS(i) {
                                xv[i] = xv[i] + (mul(alpha, p_hat[i]) + mul(omega, s_hat[i]));
                                const value_type ri = s[i] - mul(omega, t[i]);
                                r[i] = ri;
                                s0 += to_value(abs2(ri));
                                s1 += mul_conj(r_hat[i], ri);
                            }
                            sums = SUM4(s0, s1, 0, 0);
                            res = sqrt(real_part(SUM_AT(sums, 0)));
                            if (!isfinite(res)) {
                                reason = STATUS_DIVERGED;
                            } else if (res <= limit) {
                                check = 1;
                            } else {
                                rho_old = rho;
                                rho = SUM_AT(sums, 1);
                            }
                        }
                    }
                    if (check) {
                        // r = r_hat = b - A x;  p = v = 0: converged, or a restart from x
                        s0 = 0;
                        RESIDUAL_ROWS(STORE_R, NO_MORE)
                        rho = SUM_AT(SUM4(s0, 0, 0, 0), 0);
                        res = sqrt(real_part(rho));
                        rhat_norm = res;
                        if (res <= limit) {
                            reason = STATUS_CONVERGED;
                        } else {
                            rho_old = to_value(1);
                            alpha = to_value(1);
                            omega = to_value(1);
                        }
                    }
                    if (reason == STATUS_RUNNING && it >= max_iters) reason = STATUS_ITERATION_LIMIT;
                }
            }
        }
        #undef STORE_R
        STORE_X
        FINISH(it, res, reason)
        SYNC();
    }
}
