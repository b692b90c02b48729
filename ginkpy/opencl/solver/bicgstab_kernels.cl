// Kernels of Bicgstab: one work-item per entry of the n x k vectors (entry (row, c) at
// row * k + c); scalars are 1 x k. Columns with a nonzero stop status are left untouched; a
// zero divisor makes the work-item of row 0 write STATUS_BREAKDOWN and every work-item of
// the column skip it. Scalars that a kernel writes are never read by it (work-items of one
// launch are not ordered), so prev_rho is updated in step_2 and omega in step_3.
#include "common.cl"

__kernel void initialize(const int size, const int k, __global const value_type* r,
                         __global value_type* r_hat, __global value_type* p,
                         __global value_type* v, __global value_type* s,
                         __global value_type* prev_rho, __global value_type* alpha,
                         __global value_type* omega)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    // r_hat = r;  p = v = s = 0;  prev_rho = alpha = omega = 1
    r_hat[i] = r[i];
    p[i] = 0;
    v[i] = 0;
    s[i] = 0;
    if (i < k) {
        prev_rho[i] = 1;
        alpha[i] = 1;
        omega[i] = 1;
    }
}

__kernel void step_1(const int size, const int k, __global const value_type* r,
                     __global value_type* p, __global const value_type* v,
                     __global const value_type* rho, __global const value_type* prev_rho,
                     __global const value_type* alpha, __global const value_type* omega,
                     __global uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = i % k;
    if (status[c] != STATUS_RUNNING) return;
    if (rho[c] == 0 || omega[c] == 0) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    // p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
    const value_type beta = (rho[c] / prev_rho[c]) * (alpha[c] / omega[c]);
    p[i] = r[i] + beta * (p[i] - omega[c] * v[i]);
}

__kernel void step_2(const int size, const int k, __global const value_type* r,
                     __global value_type* s, __global const value_type* v,
                     __global const value_type* rho, __global value_type* prev_rho,
                     __global value_type* alpha, __global const value_type* rv,
                     __global uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = i % k;
    if (status[c] != STATUS_RUNNING) return;
    if (rv[c] == 0) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    // alpha = rho / rv;  s = r - alpha v;  prev_rho = rho
    const value_type a = rho[c] / rv[c];
    s[i] = r[i] - a * v[i];
    if (i < k) {
        alpha[c] = a;
        prev_rho[c] = rho[c];
    }
}

__kernel void step_3(const int size, const int k, __global value_type* x,
                     __global value_type* r, __global const value_type* s,
                     __global const value_type* t, __global const value_type* y,
                     __global const value_type* z, __global const value_type* alpha,
                     __global value_type* omega, __global const value_type* ts,
                     __global const value_type* tt, __global uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = i % k;
    if (status[c] != STATUS_RUNNING) return;
    // omega = ts / tt (0 where tt == 0: s == 0);  x += alpha y + omega z;  r = s - omega t
    const value_type w = tt[c] != 0 ? ts[c] / tt[c] : 0;
    x[i] += alpha[c] * y[i] + w * z[i];
    r[i] = s[i] - w * t[i];
    if (i < k) omega[c] = w;
}
