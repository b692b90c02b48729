// Kernels of PipeCg over n x k vectors (entry i in column i % k). Columns whose stop status is
// nonzero are left untouched. PRECONDITIONER: 0 none (m = w), 1 scalar Jacobi (m = diag w,
// diag n x 1), 2 an operator of its own (m given). The partial sums `dots` are (r, u), (u, w)
// and (r, r) side by side: groups x 3k.
#include "components/preconditioned.cl"

// The work-group's partial sums of (r, u), (u, w), (r, r) of column col into dots.
inline void write_dots(const value_type s_ru, const value_type s_uw, const value_type s_rr, const int c_,
                       const int y_, const int lanes, const int width, const int col, const int k,
                       const int group, __global value_type* dots, __local value_type* tmp)
{
    const value_type t_ru = local_sum(tmp + c_, s_ru, y_, lanes, width);
    barrier(CLK_LOCAL_MEM_FENCE);
    const value_type t_uw = local_sum(tmp + c_, s_uw, y_, lanes, width);
    barrier(CLK_LOCAL_MEM_FENCE);
    const value_type t_rr = local_sum(tmp + c_, s_rr, y_, lanes, width);
    if (y_ == 0 && col < k) {
        dots[group * 3 * k + col] = t_ru;
        dots[group * 3 * k + k + col] = t_uw;
        dots[group * 3 * k + 2 * k + col] = t_rr;
    }
}

// In the columns with columns[col] != 0 (every column where has_columns is 0): z = q = s = p = 0
// and gamma_prev = 0 (a first step follows); the partial sums of (r, u), (u, w), (r, r) of
// every column (reduction layout).
__kernel void initialize(REDUCTION_PARAMS, __global const value_type* r, __global const value_type* u,
                         __global const value_type* w, __global value_type* z, __global value_type* q,
                         __global value_type* s, __global value_type* p, __global value_type* gamma_prev,
                         const int has_columns, __global const uchar* columns, __global value_type* dots,
                         __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    value_type s_ru = 0, s_uw = 0, s_rr = 0;
    if (col < k) {
        const bool reset = !has_columns || columns[col];
        if (reset && group == 0 && y_ == 0) gamma_prev[col] = 0;
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            const value_type r_i = r[i], u_i = u[i];
            if (reset) z[i] = q[i] = s[i] = p[i] = 0;
            s_ru += mul_conj(r_i, u_i);
            s_uw += mul_conj(u_i, w[i]);
            s_rr += to_value(abs2(r_i));
        }
    }
    write_dots(s_ru, s_uw, s_rr, c_, y_, lanes, width, col, k, group, dots, tmp);
}

// One work-group: the stopping check on ||r|| = sqrt((r, r)); beta = gamma / gamma_prev (0
// where gamma_prev is 0: a first step); alpha = gamma / (delta - beta gamma / alpha_prev);
// gamma_prev = gamma, alpha_prev = alpha. gamma == 0 or delta - beta gamma / alpha_prev <= 0:
// a breakdown.
__kernel void step_1(const int k, const int parts, __global const value_type* dots,
                     __global value_type* gamma_prev, __global value_type* alpha_prev,
                     __global value_type* alpha, __global value_type* beta, STOP_PARAMS,
                     __local value_type* sums, __local value_type* tmp)
{
    sum_partials(dots, parts, 3 * k, sums, tmp);
    for (int col = get_local_id(0); col < k; col += get_local_size(0)) {
        const value_type gamma = sums[col], delta = sums[k + col];
        if (!stop_check(col, k, sqrt(real_part(sums[2 * k + col])), true, STOP_ARGS)) continue;
        const value_type prev = gamma_prev[col];
        const bool first = is_zero(prev);
        const value_type b = first ? 0 : divide(gamma, prev);
        const value_type denom = first ? delta : delta - divide(mul(b, gamma), alpha_prev[col]);
        if (!(real_part(denom) > 0) || is_zero(gamma)) {
            status[col] = STATUS_BREAKDOWN;
            continue;
        }
        const value_type a = divide(gamma, denom);
        alpha[col] = a;
        beta[col] = b;
        gamma_prev[col] = gamma;
        alpha_prev[col] = a;
    }
}

// In the running columns (am: n = A m of the method): z = n + beta z; q = m + beta q; s = w + beta s; p = u + beta p;
// x += alpha p; r -= alpha s; u -= alpha q; w -= alpha z. The partial sums of the new (r, u),
// (u, w), (r, r) of every column (reduction layout).
__kernel void step_2(REDUCTION_PARAMS, __global value_type* x, __global value_type* r, __global value_type* u,
                     __global value_type* w, __global const value_type* m, __global const value_type* am,
                     __global value_type* z, __global value_type* q, __global value_type* s,
                     __global value_type* p, __global const value_type* diag,
                     __global const value_type* alpha, __global const value_type* beta,
                     __global const uchar* status, __global value_type* dots, __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    value_type s_ru = 0, s_uw = 0, s_rr = 0;
    if (col < k) {
        const bool go = status[col] == STATUS_RUNNING;
        const value_type a = alpha[col], b = beta[col];
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type r_i = r[i], u_i = u[i], w_i = w[i];
            if (go) {
                const value_type z_i = am[i] + mul(b, z[i]);
                const value_type q_i = preconditioned_at(i, row, w, m, diag) + mul(b, q[i]);
                const value_type s_i = w_i + mul(b, s[i]);
                const value_type p_i = u_i + mul(b, p[i]);
                z[i] = z_i;
                q[i] = q_i;
                s[i] = s_i;
                p[i] = p_i;
                x[i] += mul(a, p_i);
                r_i -= mul(a, s_i);
                u_i -= mul(a, q_i);
                w_i -= mul(a, z_i);
                r[i] = r_i;
                u[i] = u_i;
                w[i] = w_i;
            }
            s_ru += mul_conj(r_i, u_i);
            s_uw += mul_conj(u_i, w_i);
            s_rr += to_value(abs2(r_i));
        }
    }
    write_dots(s_ru, s_uw, s_rr, c_, y_, lanes, width, col, k, group, dots, tmp);
}
