// SpMV of Ell. Entry i of a row is at first + stride * i (Ell: first = row, stride = rows;
// Sellp includes this file and passes its slice's offset and slice_size). Padding has column
// -1: it reads b[0] and the product is selected away, relational built-ins instead of a
// branch (seed 002). One work-item per (row, column j of b); consecutive rows read
// consecutive entries.
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

// x = A b
__kernel void spmv(const int num_rows, const int k, const int stride, const int width,
                   __global const index_type* col_idxs, __global const value_type* values,
                   __global const value_type* b, __global value_type* x)
{
    const int row = get_global_id(0), j = get_global_id(1);
    if (row < num_rows) {
        x[row * k + j] = padded_row_product(row, stride, width, k, j, col_idxs, values, b);
    }
}

// x = alpha A b + beta x; alpha and beta are read at j * stride (stride 0: one for all columns)
__kernel void advanced_spmv(const int num_rows, const int k, const int stride, const int width,
                            __global const index_type* col_idxs, __global const value_type* values,
                            __global const value_type* b, __global value_type* x,
                            __global const value_type* alpha, const int alpha_stride,
                            __global const value_type* beta, const int beta_stride)
{
    const int row = get_global_id(0), j = get_global_id(1);
    if (row < num_rows) {
        const value_type product = padded_row_product(row, stride, width, k, j, col_idxs, values, b);
        x[row * k + j] = mul(alpha[j * alpha_stride], product) + mul(beta[j * beta_stride], x[row * k + j]);
    }
}
