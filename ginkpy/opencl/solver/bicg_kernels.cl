// Kernels of Bicg: one work-item per entry of the n x k vectors (entry (row, c) at
// row * k + c); scalars are 1 x k. Columns with a nonzero stop status are left untouched; a
// zero divisor makes the work-item of row 0 write STATUS_BREAKDOWN and every work-item of
// the column skip it. A scalar that a kernel writes is never read by it.
#include "common.cl"

__kernel void initialize(const int size, const int k, __global const value_type* r,
                         __global value_type* r2, __global value_type* p,
                         __global value_type* p2, __global value_type* prev_rho)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    // r2 = r;  p = p2 = 0;  prev_rho = 1
    r2[i] = r[i];
    p[i] = 0;
    p2[i] = 0;
    if (i < k) prev_rho[i] = to_value(1);
}

__kernel void step_1(const int size, const int k, __global value_type* p,
                     __global const value_type* z, __global value_type* p2,
                     __global const value_type* z2, __global const value_type* rho,
                     __global const value_type* prev_rho, __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    // p = z + (rho / prev_rho) p;  p2 = z2 + conj(rho / prev_rho) p2  (tmp = 0 where prev_rho == 0)
    const value_type tmp = !is_zero(prev_rho[c]) ? divide(rho[c], prev_rho[c]) : 0;
    p[i] = z[i] + mul(tmp, p[i]);
    p2[i] = z2[i] + mul(conj_value(tmp), p2[i]);
}

__kernel void step_2(const int size, const int k, __global value_type* x,
                     __global value_type* r, __global value_type* r2,
                     __global const value_type* p, __global const value_type* q,
                     __global const value_type* q2, __global const value_type* beta,
                     __global const value_type* rho, __global value_type* prev_rho,
                     __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    if (is_zero(beta[c]) || is_zero(rho[c])) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    // x += (rho / beta) p;  r -= (rho / beta) q;  r2 -= conj(rho / beta) q2;  prev_rho = rho
    const value_type alpha = divide(rho[c], beta[c]);
    x[i] += mul(alpha, p[i]);
    r[i] -= mul(alpha, q[i]);
    r2[i] -= mul(conj_value(alpha), q2[i]);
    if (i < k) prev_rho[c] = rho[c];
}
