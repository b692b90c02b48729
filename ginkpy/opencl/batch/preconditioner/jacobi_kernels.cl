// Kernels of the batch Jacobi: inverse blocks (N, num_blocks, stride, stride), each transposed.
#include "common.cl"

// x_i = D_i^-1 b_i; work-item e computes entry e of x (BATCH_ENTRY):
// x_i[row] = sum_j blocks[item, k, j, row - start_k] b_i[start_k + j], k the block of the row.
__kernel void apply(const int size, const int n, const int k, const int num_blocks, const int stride,
                    __global const int* block_ptrs, __global const int* row_blocks,
                    __global const value_type* blocks, __global const value_type* b,
                    __global value_type* x)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    BATCH_ENTRY(e, n, k, item, row, col);
    const int block = row_blocks[row];
    const int start = block_ptrs[block];
    __global const value_type* inverse = blocks + ((size_t)item * num_blocks + block) * stride * stride
                                         + row - start;
    __global const value_type* bi = b + ((size_t)item * n + start) * k + col;
    value_type sum = 0;
    for (int j = 0; j < block_ptrs[block + 1] - start; ++j) {
        sum += mul(inverse[j * stride], bi[j * k]);
    }
    x[e] = sum;
}
