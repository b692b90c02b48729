// SpMV of Sellp: Ell's padded row product (included from ell_kernels.cl, with common.cl) on
// the row's slice. Entry i of local row r of slice s is at (slice_sets[s] + i) * slice_size + r.
// One work-item per (row, column j of b).
#include "matrix/ell_kernels.cl"

inline value_type sellp_row_product(const int row, const int slice_size, const int k, const int j,
                                    __global const index_type* slice_sets,
                                    __global const index_type* slice_lengths,
                                    __global const index_type* col_idxs,
                                    __global const value_type* values, __global const value_type* b)
{
    const int slice = row / slice_size;
    return padded_row_product(slice_sets[slice] * slice_size + row % slice_size, slice_size,
                              slice_lengths[slice], k, j, col_idxs, values, b);
}

// x = A b
__kernel void sellp_spmv(const int num_rows, const int k, const int slice_size,
                         __global const index_type* slice_sets, __global const index_type* slice_lengths,
                         __global const index_type* col_idxs, __global const value_type* values,
                         __global const value_type* b, __global value_type* x)
{
    const int row = get_global_id(0), j = get_global_id(1);
    if (row < num_rows) {
        x[row * k + j] = sellp_row_product(row, slice_size, k, j, slice_sets, slice_lengths, col_idxs,
                                           values, b);
    }
}

// x = alpha A b + beta x; alpha and beta are read at j * stride (stride 0: one for all columns)
__kernel void sellp_advanced_spmv(const int num_rows, const int k, const int slice_size,
                                  __global const index_type* slice_sets,
                                  __global const index_type* slice_lengths,
                                  __global const index_type* col_idxs, __global const value_type* values,
                                  __global const value_type* b, __global value_type* x,
                                  __global const value_type* alpha, const int alpha_stride,
                                  __global const value_type* beta, const int beta_stride)
{
    const int row = get_global_id(0), j = get_global_id(1);
    if (row < num_rows) {
        const value_type product = sellp_row_product(row, slice_size, k, j, slice_sets, slice_lengths,
                                                     col_idxs, values, b);
        x[row * k + j] = mul(alpha[j * alpha_stride], product) + mul(beta[j * beta_stride], x[row * k + j]);
    }
}
