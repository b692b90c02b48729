// Kernels of Bicgstab over n x k vectors (entry i in column i % k). Columns whose stop status
// is nonzero are left untouched; a zero divisor stops its column with BREAKDOWN (written by the
// column's first work-item: others that read the status before or after skip it either way).
#include "common.cl"
#ifndef DIAGONAL
#define DIAGONAL 0  // step_3: x's update scaled by diag (scalar Jacobi)
#endif

// r_hat = r;  p = v = 0;  prev_rho = alpha = omega = 1
__kernel void initialize(const int size, const int k, __global const value_type* r,
                         __global value_type* r_hat, __global value_type* p,
                         __global value_type* v, __global value_type* prev_rho,
                         __global value_type* alpha, __global value_type* omega)
{
    const int i = get_global_id(0);
    if (i < size) {
        r_hat[i] = r[i];
        p[i] = 0;
        v[i] = 0;
    }
    if (i < k) {
        prev_rho[i] = to_value(1);
        alpha[i] = to_value(1);
        omega[i] = to_value(1);
    }
}

// partial sums of r_hat . r and r . r (reduction layout)
__kernel void prepare(REDUCTION_PARAMS, __global const value_type* r,
                      __global const value_type* r_hat, __global value_type* rho_new,
                      __global value_type* rr, __local value_type* sums, __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    value_type s_rho = 0, s_rr = 0;
    if (col < k) {
        s_rho = column_dot(r_hat, r, begin, end, lanes, k, col, true);
        s_rr = column_dot(r, r, begin, end, lanes, k, col, true);
    }
    // the work-group's partial sums of r_hat^H r and r^H r
    write_partial_pair(s_rho, s_rr, true, c_, y_, lanes, width, col, k, group, rho_new, rr, tmp);
}

// The stopping check on ||r||, then in running columns: a restart where |r_hat . r| <=
// restart_tol ||r_hat|| ||r|| (r_hat = p = r, rho = r . r), else p = r + beta (p - omega v) with
// beta = (rho / prev_rho) (alpha / omega), rho = r_hat . r (omega == 0: breakdown).
__kernel void step_1(REDUCTION_PARAMS, __global const value_type* r, __global value_type* r_hat,
                     __global value_type* p, __global const value_type* v,
                     __global const value_type* rho_new, const int rho_parts,
                     __global const value_type* rr, const int rr_parts, __global value_type* rho,
                     __global const value_type* prev_rho, __global const value_type* alpha,
                     __global const value_type* omega, __global const value_type* rhat_sq,
                     const real_type restart_tol, __global uchar* restarted, STOP_PARAMS,
                     __local value_type* sums, __local value_type* tmp)
{
    sum_partials(rho_new, rho_parts, k, sums, tmp);
    sum_partials(rr, rr_parts, k, sums + k, tmp);
    REDUCTION_LAYOUT;
    if (col >= k) return;
    const bool writer = group == 0 && y_ == 0;
    const value_type rho_c = sums[col], rr_c = sums[k + col];
    if (!stop_check(col, k, sqrt(real_part(rr_c)), writer, STOP_ARGS)) return;
    const bool restart = abs_value(rho_c) <= restart_tol * sqrt(real_part(rhat_sq[col])) * sqrt(real_part(rr_c));
    if (writer) restarted[col] = restart;
    if (restart) {
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            r_hat[i] = r[i];
            p[i] = r[i];
        }
        if (writer) rho[col] = rr_c;
        return;
    }
    const value_type w = omega[col];
    if (is_zero(w)) {
        if (writer) status[col] = STATUS_BREAKDOWN;
        return;
    }
    if (writer) rho[col] = rho_c;
    const value_type beta = mul(divide(rho_c, prev_rho[col]), divide(alpha[col], w));
    // ROWS_AT_ONCE rows a turn: their loads all in flight before the first store
    for (int row0 = begin; row0 < end; row0 += ROWS_AT_ONCE * lanes) {
        value_type r_[ROWS_AT_ONCE], p_[ROWS_AT_ONCE], v_[ROWS_AT_ONCE];
#pragma unroll
        for (int u = 0; u < ROWS_AT_ONCE; ++u) {
            const int row = row0 + u * lanes, i = row * k + col;
            if (row < end) {
                r_[u] = r[i];
                p_[u] = p[i];
                v_[u] = v[i];
            }
        }
#pragma unroll
        for (int u = 0; u < ROWS_AT_ONCE; ++u) {
            const int row = row0 + u * lanes;
            if (row < end) p[row * k + col] = r_[u] + mul(beta, p_[u] - mul(w, v_[u]));
        }
    }
}

// alpha = rho / (r_hat . v) (0: breakdown); s = r - alpha v; prev_rho = rho;
// ||r_hat||^2 = rho where restarted
__kernel void step_2(REDUCTION_PARAMS, __global const value_type* r, __global value_type* s,
                     __global const value_type* v, __global const value_type* rv, const int rv_parts,
                     __global const value_type* rho, __global value_type* prev_rho,
                     __global value_type* alpha, __global value_type* rhat_sq,
                     __global const uchar* restarted, __global uchar* status,
                     __local value_type* sums, __local value_type* tmp)
{
    sum_partials(rv, rv_parts, k, sums, tmp);
    REDUCTION_LAYOUT;
    if (col >= k || status[col] != STATUS_RUNNING) return;
    const bool writer = group == 0 && y_ == 0;
    const value_type rv_c = sums[col];
    if (is_zero(rv_c)) {
        if (writer) status[col] = STATUS_BREAKDOWN;
        return;
    }
    const value_type a = divide(rho[col], rv_c);
    for (int row0 = begin; row0 < end; row0 += ROWS_AT_ONCE * lanes) {
        value_type r_[ROWS_AT_ONCE], v_[ROWS_AT_ONCE];
#pragma unroll
        for (int u = 0; u < ROWS_AT_ONCE; ++u) {
            const int row = row0 + u * lanes, i = row * k + col;
            if (row < end) {
                r_[u] = r[i];
                v_[u] = v[i];
            }
        }
#pragma unroll
        for (int u = 0; u < ROWS_AT_ONCE; ++u) {
            const int row = row0 + u * lanes;
            if (row < end) s[row * k + col] = r_[u] - mul(a, v_[u]);
        }
    }
    if (writer) {
        alpha[col] = a;
        prev_rho[col] = rho[col];
        if (restarted[col]) rhat_sq[col] = rho[col];
    }
}

// omega = (t^H s) / (t^H t) (0 where t^H t == 0); x += alpha y + omega z (times diag with
// DIAGONAL); r = s - omega t in running columns; the partial sums of r_hat^H r and r^H r of
// every column (reduction layout). st holds the partial sums of s^H t, then of t^H t.
__kernel void step_3(REDUCTION_PARAMS, __global value_type* x, __global value_type* r,
                     __global const value_type* r_hat, __global const value_type* s,
                     __global const value_type* t, __global const value_type* y,
                     __global const value_type* z, __global const value_type* diag,
                     __global const value_type* st, const int st_parts,
                     __global const value_type* alpha, __global value_type* omega,
                     __global const uchar* status, __global value_type* rho_new,
                     __global value_type* rr, __local value_type* sums, __local value_type* tmp)
{
    sum_partials(st, st_parts, 2 * k, sums, tmp);
    REDUCTION_LAYOUT;
    value_type s_rho = 0, s_rr = 0;
    if (col < k) {
        const bool go = status[col] == STATUS_RUNNING;
        const value_type ts = sums[col], tt = sums[k + col];
        const value_type w = real_part(tt) != 0 ? conj_value(ts) / real_part(tt) : 0;
        const value_type a = alpha[col];
        if (go && group == 0 && y_ == 0) omega[col] = w;
        // ROWS_AT_ONCE rows a turn: their loads all in flight before the first store
        for (int row0 = begin; row0 < end; row0 += ROWS_AT_ONCE * lanes) {
            value_type r_[ROWS_AT_ONCE], h_[ROWS_AT_ONCE], x_[ROWS_AT_ONCE], y_u[ROWS_AT_ONCE];
            value_type z_[ROWS_AT_ONCE], s_[ROWS_AT_ONCE], t_[ROWS_AT_ONCE], d_[ROWS_AT_ONCE];
#pragma unroll
            for (int u = 0; u < ROWS_AT_ONCE; ++u) {
                const int row = row0 + u * lanes, i = row * k + col;
                if (row < end) {
                    r_[u] = r[i];
                    h_[u] = r_hat[i];
                    if (go) {
                        x_[u] = x[i];
                        y_u[u] = y[i];
                        z_[u] = z[i];
                        s_[u] = s[i];
                        t_[u] = t[i];
#if DIAGONAL
                        d_[u] = diag[row];
#endif
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < ROWS_AT_ONCE; ++u) {
                const int row = row0 + u * lanes, i = row * k + col;
                if (row < end) {
                    value_type r_i = r_[u];
                    if (go) {
#if DIAGONAL
                        x[i] = x_[u] + mul(d_[u], mul(a, y_u[u]) + mul(w, z_[u]));
#else
                        x[i] = x_[u] + (mul(a, y_u[u]) + mul(w, z_[u]));
#endif
                        r_i = s_[u] - mul(w, t_[u]);
                        r[i] = r_i;
                    }
                    s_rho += mul_conj(h_[u], r_i);
                    s_rr += to_value(abs2(r_i));
                }
            }
        }
    }
    // the work-group's partial sums of r_hat^H r and r^H r
    write_partial_pair(s_rho, s_rr, true, c_, y_, lanes, width, col, k, group, rho_new, rr, tmp);
}
