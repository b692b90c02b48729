// Kernels of the batch Dense: values (N, n, m), each item row-major.
#include "common.cl"

// x_i = A_i b_i; work-item e computes entry e of x (BATCH_ENTRY).
__kernel void spmv(const int size, const int n, const int k, const int m,
                   __global const value_type* values, __global const value_type* b,
                   __global value_type* x)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    BATCH_ENTRY(e, n, k, item, row, col);
    __global const value_type* a_row = values + ((size_t)item * n + row) * m;
    __global const value_type* bi = b + (size_t)item * m * k + col;
    value_type sum = 0;
    for (int j = 0; j < m; ++j) {
        sum += mul(a_row[j], bi[j * k]);
    }
    x[e] = sum;
}
