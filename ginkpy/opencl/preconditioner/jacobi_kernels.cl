// Apply kernels of Jacobi: x = D^-1 b and x = alpha D^-1 b + beta x, b and x n x k row-major.
// One work-item per entry (row, column). The inverse blocks are stored padded to
// stride x stride (stride = the largest block), block i at i * stride * stride, so a row finds
// its part of the inverse from its block number alone; each block is stored transposed, so for
// each j the rows of one block read consecutive addresses. Scalar Jacobi (stride 1) is the
// inverse diagonal. A scalar alpha or beta is 1 x 1 or 1 x k, read at column * stride (0 or 1).
#include "common.cl"

// Entry (row, col) of D^-1 b: the row's row of its inverse block times the block's part of b.
inline value_type block_row_times_b(const int row, const int col, const int k, const int stride,
                                    __global const int* block_ptrs, __global const int* row_blocks,
                                    __global const value_type* blocks, __global const value_type* b)
{
    const int block = row_blocks[row];
    const int start = block_ptrs[block];
    const int block_size = block_ptrs[block + 1] - start;
    // entry (row, j) of the block's inverse is at inv_row[j * stride]
    __global const value_type* inv_row = blocks + (size_t)block * stride * stride + (row - start);
    __global const value_type* b_block = b + (size_t)start * k + col;
    value_type sum = 0;
    for (int j = 0; j < block_size; ++j) {
        sum += mul(inv_row[j * stride], b_block[(size_t)j * k]);
    }
    return sum;
}

__kernel void simple_apply(const int size, const int k, const int stride,
                           __global const int* block_ptrs, __global const int* row_blocks,
                           __global const value_type* blocks, __global const value_type* b,
                           __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] = block_row_times_b(i / k, COLUMN(i, k), k, stride, block_ptrs, row_blocks, blocks, b);
}

__kernel void apply(const int size, const int k, __global const value_type* alpha,
                    const int alpha_stride, const int stride, __global const int* block_ptrs,
                    __global const int* row_blocks, __global const value_type* blocks,
                    __global const value_type* b, __global const value_type* beta,
                    const int beta_stride, __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) {
        const int col = COLUMN(i, k);
        x[i] = mul(alpha[col * alpha_stride],
                   block_row_times_b(i / k, col, k, stride, block_ptrs, row_blocks, blocks, b))
               + mul(beta[col * beta_stride], x[i]);
    }
}

__kernel void simple_scalar_apply(const int size, const int k, __global const value_type* inv_diag,
                                  __global const value_type* b, __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] = mul(inv_diag[i / k], b[i]);
}

__kernel void scalar_apply(const int size, const int k, __global const value_type* alpha,
                           const int alpha_stride, __global const value_type* inv_diag,
                           __global const value_type* b, __global const value_type* beta,
                           const int beta_stride, __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) {
        const int col = COLUMN(i, k);
        x[i] = mul(mul(alpha[col * alpha_stride], inv_diag[i / k]), b[i]) + mul(beta[col * beta_stride], x[i]);
    }
}

// inverse[row] = 1 / a_{row,row} (the sum of its stored diagonal entries); where that is 0,
// missing or not finite (too small to invert) it is 1 and bad[row] = 1
__kernel void invert_diagonal(const int n, __global const index_type* row_ptrs,
                              __global const index_type* col_idxs,
                              __global const value_type* values, __global value_type* inverse,
                              __global uchar* bad)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    value_type d = 0;
    for (int j = row_ptrs[row]; j < row_ptrs[row + 1]; ++j) {
        if (col_idxs[j] == row) d += values[j];
    }
    const bool nonzero = !is_zero(d);
    const value_type inv = nonzero ? divide(to_value(1), d) : 0;
    const bool ok = nonzero && is_finite_value(inv);
    inverse[row] = ok ? inv : to_value(1);
    bad[row] = !ok;
}
