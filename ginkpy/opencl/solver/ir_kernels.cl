// Kernels of Ir: one work-item per entry of the n x k vectors (entry (row, c) at row * k + c).
#include "common.cl"

// r = 0 in stopped columns;  z = r (the inner solver's initial guess)
__kernel void prepare(const int size, const int k, __global value_type* r,
                      __global value_type* z, __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const value_type value = status[COLUMN(i, k)] == STATUS_RUNNING ? r[i] : 0;
    r[i] = value;
    z[i] = value;
}

// x += omega z in running columns (omega is 1 x 1)
__kernel void update(const int size, const int k, __global const value_type* omega,
                   __global const value_type* z, __global value_type* x,
                   __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size || status[COLUMN(i, k)] != STATUS_RUNNING) return;
    x[i] += mul(omega[0], z[i]);
}
