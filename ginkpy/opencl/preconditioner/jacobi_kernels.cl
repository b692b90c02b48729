// Apply kernels of Jacobi: x = D^-1 b and x = alpha D^-1 b + beta x, b and x n x k row-major.
// One work-item per entry (row, column). The inverse blocks are stored padded to
// stride x stride (stride = the largest block), block i at i * stride * stride, so a row finds
// its part of the inverse from its block number alone; each block is stored transposed, so for
// each j the rows of one block read consecutive addresses. Scalar Jacobi (stride 1) is the
// inverse diagonal. A scalar alpha or beta is 1 x 1 or 1 x k, read at column * stride (0 or 1).
// BLOCK_SINGLE (the block apply kernels): the blocks are stored in single precision (float, or
// float2 for complex values: storage_optimization) and read into value_type.
#include "common.cl"

#if BLOCK_SINGLE
#if VALUE_COMPLEX
typedef float2 block_type;
#define BLOCK_VALUE(v) ((value_type)((real_type)(v).x, (real_type)(v).y))
#else
typedef float block_type;
#define BLOCK_VALUE(v) ((value_type)(v))
#endif
#else
typedef value_type block_type;
#define BLOCK_VALUE(v) (v)
#endif

// Entry (row, col) of D^-1 b: the row's row of its inverse block times the block's part of b.
inline value_type block_row_times_b(const int row, const int col, const int k, const int stride,
                                    __global const int* block_ptrs, __global const int* row_blocks,
                                    __global const block_type* blocks, __global const value_type* b)
{
    const int block = row_blocks[row];
    const int start = block_ptrs[block];
    const int block_size = block_ptrs[block + 1] - start;
    // entry (row, j) of the block's inverse is at inv_row[j * stride]
    __global const block_type* inv_row = blocks + (size_t)block * stride * stride + (row - start);
    __global const value_type* b_block = b + (size_t)start * k + col;
    value_type sum = 0;
    for (int j = 0; j < block_size; ++j) {
        sum += mul(BLOCK_VALUE(inv_row[j * stride]), b_block[(size_t)j * k]);
    }
    return sum;
}

__kernel void simple_apply(const int size, const int k, const int stride,
                           __global const int* block_ptrs, __global const int* row_blocks,
                           __global const block_type* blocks, __global const value_type* b,
                           __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] = block_row_times_b(i / k, COLUMN(i, k), k, stride, block_ptrs, row_blocks, blocks, b);
}

__kernel void apply(const int size, const int k, __global const value_type* alpha,
                    const int alpha_stride, const int stride, __global const int* block_ptrs,
                    __global const int* row_blocks, __global const block_type* blocks,
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

// -- find_blocks: Ginkgo's supervariable agglomeration (see jacobi_kernels.py) ------------------

// run[i] = starts_run[i] = 1 where row i starts a run of rows with one column pattern (row 0,
// or a pattern other than row i - 1's), else 0
__kernel void compare_rows(const int n, __global const int* row_ptrs, __global const int* col_idxs,
                           __global int* run, __global uchar* starts_run)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    bool differs = i == 0;
    if (!differs) {
        const int previous = row_ptrs[i - 1], begin = row_ptrs[i], end = row_ptrs[i + 1];
        differs = end - begin != begin - previous;
        for (int e = 0; !differs && e < end - begin; ++e) differs = col_idxs[previous + e] != col_idxs[begin + e];
    }
    run[i] = differs;
    starts_run[i] = differs;
}

// run[i] (prefix-summed) is the number of runs started before row i: first_row[run] = its first row
__kernel void run_firsts(const int n, __global const int* run, __global const uchar* starts_run,
                         __global int* first_row)
{
    const int i = get_global_id(0);
    if (i < n && starts_run[i]) first_row[run[i]] = i;
}

// supervariable[i]: row i starts a supervariable (a run cut every max_block_size rows)
__kernel void supervariables(const int n, const int max_block_size, __global const int* run,
                             __global const uchar* starts_run, __global const int* first_row,
                             __global uchar* supervariable)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int first = first_row[starts_run[i] ? run[i] : run[i] - 1];
    supervariable[i] = (i - first) % max_block_size == 0;
}

// jump[i]: where a block that starts at supervariable i ends, the last supervariable start (or
// n) at most max_block_size rows on; n for the other rows and for i = n. position[i] = 0.
__kernel void jumps(const int n, const int max_block_size, __global const uchar* supervariable,
                    __global int* jump, __global int* position)
{
    const int i = get_global_id(0);
    if (i > n) return;
    position[i] = 0;
    if (i == n || !supervariable[i]) {
        jump[i] = n;
        return;
    }
    int j = min(i + max_block_size, n);
    while (j < n && !supervariable[j]) --j;  // stops at the next start at the latest
    jump[i] = j;
}

// one step of binary lifting: position[t] = jump^t(0) once every bit of t is done;
// next_power = power o power (power = jump^(2^bit))
__kernel void lift(const int size, const int bit, __global int* position, __global const int* power,
                   __global int* next_power)
{
    const int t = get_global_id(0);
    if (t >= size) return;
    if ((t >> bit) & 1) position[t] = power[position[t]];
    next_power[t] = power[power[t]];
}

// out[0] = the number of blocks (position[t] < n for t < out[0]), out[1] = the largest block
__kernel void count_blocks(const int n, __global const int* position, __global int* out)
{
    const int t = get_global_id(0);
    if (t >= n) return;
    const int p = position[t];
    if (p < n) {
        const int q = position[t + 1];
        if (q == n) out[0] = t + 1;
        atomic_max(out + 1, q - p);
    }
}
