// Kernels of the batch Csr: N items sharing row_ptrs and col_idxs, values (N, nnz).
#include "common.cl"

// x_i = A_i b_i; work-item e computes entry e of x (BATCH_ENTRY);
// b has m rows per item.
__kernel void spmv(const int size, const int n, const int k, const int nnz, const int m,
                   __global const int* row_ptrs, __global const int* col_idxs,
                   __global const value_type* values, __global const value_type* b,
                   __global value_type* x)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    BATCH_ENTRY(e, n, k, item, row, col);
    __global const value_type* vals = values + (size_t)item * nnz;
    __global const value_type* bi = b + (size_t)item * m * k + col;
    value_type sum = 0;
    for (int j = row_ptrs[row]; j < row_ptrs[row + 1]; ++j) {
        sum += mul(vals[j], bi[col_idxs[j] * k]);
    }
    x[e] = sum;
}
