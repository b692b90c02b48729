// Kernels of Fcg: one work-item per entry of the n x k vectors (entry (row, c) at
// row * k + c); scalars are 1 x k. Columns with a nonzero stop status are left untouched; a
// zero or negative divisor makes the work-item of row 0 write STATUS_BREAKDOWN and every
// work-item of the column skip it. A scalar that a kernel writes is never read by it.
// The start (t = r;  p = q = 0;  prev_rho = 1) runs Bicg's initialize.
#include "common.cl"

// p = z + (rho_t / prev_rho) p, where rho_t / prev_rho is 0 if prev_rho is 0
__kernel void step_1(const int size, const int k, __global value_type* p,
                     __global const value_type* z, __global const value_type* rho_t,
                     __global const value_type* prev_rho, __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    const value_type tmp = !is_zero(prev_rho[c]) ? divide(rho_t[c], prev_rho[c]) : 0;
    p[i] = z[i] + mul(tmp, p[i]);
}

__kernel void step_2(const int size, const int k, __global value_type* x,
                     __global value_type* r, __global value_type* t,
                     __global const value_type* p, __global const value_type* q,
                     __global const value_type* beta, __global const value_type* rho,
                     __global value_type* prev_rho, __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    if (!(real_part(beta[c]) > 0) || is_zero(rho[c])) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    // x += (rho / beta) p;  r_new = r - (rho / beta) q;  t = r_new - r;  prev_rho = rho
    const value_type alpha = divide(rho[c], beta[c]);
    const value_type r_old = r[i];
    const value_type r_new = r_old - mul(alpha, q[i]);
    x[i] += mul(alpha, p[i]);
    t[i] = r_new - r_old;
    r[i] = r_new;
    if (i < k) prev_rho[c] = rho[c];
}
