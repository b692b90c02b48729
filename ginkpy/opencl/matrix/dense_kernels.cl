// Element-wise kernels of Dense. A matrix is n x k row-major; entry (i, j) is at i * k + j.
// One work-item per entry; a scalar is 1 x 1 or 1 x k, read at j * alpha_stride
// (alpha_stride is 0 for one scalar shared by all columns).
#include "common.cl"

__kernel void fill(const int size, __global value_type* x, const value_type value)
{
    const int i = get_global_id(0);
    if (i < size) x[i] = value;
}

__kernel void scale(const int size, const int k, __global const value_type* alpha,
                    const int alpha_stride, __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] *= alpha[(i % k) * alpha_stride];
}

__kernel void add_scaled(const int size, const int k, __global const value_type* alpha,
                         const int alpha_stride, __global const value_type* b,
                         __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] += alpha[(i % k) * alpha_stride] * b[i];
}

__kernel void sub_scaled(const int size, const int k, __global const value_type* alpha,
                         const int alpha_stride, __global const value_type* b,
                         __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] -= alpha[(i % k) * alpha_stride] * b[i];
}
