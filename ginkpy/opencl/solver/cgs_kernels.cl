// Kernels of Cgs: one work-item per entry of the n x k vectors (entry (row, c) at
// row * k + c); scalars are 1 x k. Columns with a nonzero stop status are left untouched; a
// zero divisor makes the work-item of row 0 write STATUS_BREAKDOWN and every work-item of
// the column skip it. A scalar that a kernel writes is never read by it.
// The start (r_tld = r;  p = q = 0;  prev_rho = 1) runs Bicg's initialize.
#include "common.cl"

__kernel void step_1(const int size, const int k, __global const value_type* r,
                     __global value_type* u, __global value_type* p,
                     __global const value_type* q, __global const value_type* rho,
                     __global const value_type* prev_rho, __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    if (is_zero(rho[c])) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    // beta = rho / prev_rho;  u = r + beta q;  p = u + beta (q + beta p)
    const value_type beta = divide(rho[c], prev_rho[c]);
    const value_type u_i = r[i] + mul(beta, q[i]);
    u[i] = u_i;
    p[i] = u_i + mul(beta, q[i] + mul(beta, p[i]));
}

__kernel void step_2(const int size, const int k, __global const value_type* u,
                     __global const value_type* v_hat, __global value_type* q,
                     __global value_type* t, __global value_type* alpha,
                     __global const value_type* rho, __global const value_type* gamma,
                     __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    if (is_zero(gamma[c])) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    // alpha = rho / gamma;  q = u - alpha v_hat;  t = u + q
    const value_type a = divide(rho[c], gamma[c]);
    const value_type q_i = u[i] - mul(a, v_hat[i]);
    q[i] = q_i;
    t[i] = u[i] + q_i;
    if (i < k) alpha[c] = a;
}

__kernel void step_3(const int size, const int k, __global const value_type* u_hat,
                     __global value_type* x, __global const value_type* alpha,
                     __global const value_type* rho, __global value_type* prev_rho,
                     __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    // x += alpha u_hat;  prev_rho = rho
    x[i] += mul(alpha[c], u_hat[i]);
    if (i < k) prev_rho[c] = rho[c];
}
