// SpMV of Ell and Sellp. Entry i of a row is at first + stride * i: Ell: first = row, stride =
// its rows (padded), width its stored entries per row; Sellp (SLICED, a compile-time switch,
// from sellp_kernels.py): stride is the slice size, and local row r of slice s has first =
// slice_sets[s] * stride + r and width slice_lengths[s]. Padding has column -1: it reads b[0]
// and the product is selected away, relational built-ins instead of a branch (seed 002). One
// work-item per (row, column j of b); consecutive rows read consecutive entries.
#include "common.cl"

inline value_type padded_row_product(const int first, const int stride, const int width, const int k,
                                     const int j, __global const index_type* col_idxs,
                                     __global const value_type* values, __global const value_type* b)
{
    value_type sum = 0;
    for (int i = 0; i < width; ++i) {
        const index_type col = col_idxs[first + stride * i];
        const value_type product = mul(values[first + stride * i], b[max(col, 0) * k + j]);
        sum += col >= 0 ? product : (value_type)0;
    }
    return sum;
}

// Sellp's kernels take its slices' first blocks and widths besides
#if SLICED
#define SLICE_PARAMS __global const index_type* slice_sets, __global const index_type* slice_lengths,
#define SLICE_ARGS slice_sets, slice_lengths,
#else
#define SLICE_PARAMS
#define SLICE_ARGS
#endif

// the product of row `row` with column j of b
inline value_type row_product(const int row, const int stride, const int width, const int k, const int j,
                              SLICE_PARAMS __global const index_type* col_idxs,
                              __global const value_type* values, __global const value_type* b)
{
#if SLICED
    const int slice = row / stride;
    return padded_row_product(slice_sets[slice] * stride + row % stride, stride, slice_lengths[slice], k, j,
                              col_idxs, values, b);
#else
    return padded_row_product(row, stride, width, k, j, col_idxs, values, b);
#endif
}

// x = A b
__kernel void spmv(const int num_rows, const int k, const int stride, const int width, SLICE_PARAMS
                   __global const index_type* col_idxs, __global const value_type* values,
                   __global const value_type* b, __global value_type* x)
{
    const int row = get_global_id(0), j = get_global_id(1);
    if (row < num_rows) x[row * k + j] = row_product(row, stride, width, k, j, SLICE_ARGS col_idxs, values, b);
}

// x = alpha A b + beta x; alpha and beta are read at j * alpha_stride and j * beta_stride (0: one
// for all columns)
__kernel void advanced_spmv(const int num_rows, const int k, const int stride, const int width, SLICE_PARAMS
                            __global const index_type* col_idxs, __global const value_type* values,
                            __global const value_type* b, __global value_type* x,
                            __global const value_type* alpha, const int alpha_stride,
                            __global const value_type* beta, const int beta_stride)
{
    const int row = get_global_id(0), j = get_global_id(1);
    if (row < num_rows) {
        const value_type product = row_product(row, stride, width, k, j, SLICE_ARGS col_idxs, values, b);
        x[row * k + j] = mul(alpha[j * alpha_stride], product) + mul(beta[j * beta_stride], x[row * k + j]);
    }
}
