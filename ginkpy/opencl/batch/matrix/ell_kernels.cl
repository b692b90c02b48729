// Kernels of the batch Ell: N items sharing col_idxs (entry j of row r at r + n j, padding -1),
// values (N, n width).
#include "common.cl"

// x_i = A_i b_i; work-item e computes entry e of x (BATCH_ENTRY);
// b has m rows per item. Padding adds nothing, even where b holds Inf or NaN.
__kernel void spmv(const int size, const int n, const int k, const int width, const int m,
                   __global const int* col_idxs, __global const value_type* values,
                   __global const value_type* b, __global value_type* x)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    BATCH_ENTRY(e, n, k, item, row, col);
    __global const value_type* vals = values + (size_t)item * n * width;
    __global const value_type* bi = b + (size_t)item * m * k + col;
    value_type sum = 0;
    for (int j = 0; j < width; ++j) {
        const int c = col_idxs[row + j * n];
        if (c >= 0) sum += mul(vals[row + j * n], bi[c * k]);
    }
    x[e] = sum;
}
