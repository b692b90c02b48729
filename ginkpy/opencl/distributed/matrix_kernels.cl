// Kernels of the distributed Matrix. Vectors are n x k row-major; entry (i, j) at i * k + j.
#include "common.cl"

// out[i, j] = b[rows[i], j]: the rows of b that other ranks need, one work-item per entry of out
__kernel void row_gather(const int size, const int k, __global const int* rows,
                         __global const value_type* b, __global value_type* out)
{
    const int e = get_global_id(0);
    if (e < size) {
        const int i = k == 1 ? e : e / k;
        const int j = e - i * k;
        out[e] = b[rows[i] * k + j];
    }
}
