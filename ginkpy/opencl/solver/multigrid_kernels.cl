// Kernels of Multigrid's cycle (see reference/solver/multigrid_kernels.py). Vectors are n x k,
// row-major; one work-item per entry (row or aggregate, column c).
#include "common.cl"

// coarse_r[I, c] = sum over the rows i of aggregate I (in agg_rows order) of r[i, c]
__kernel void restrict_aggregates(const int size, const int k, __global const index_type* restrict agg_ptrs,
                                  __global const index_type* restrict agg_rows,
                                  __global const value_type* restrict r,
                                  __global value_type* restrict coarse_r)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const int I = k == 1 ? idx : idx / k, c = COLUMN(idx, k);
    value_type sum = 0;
    for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) sum += r[agg_rows[p] * k + c];
    coarse_r[idx] = sum;
}

// x[i, c] += coarse_x[agg[i], c]
__kernel void prolong(const int size, const int k, __global const index_type* restrict agg,
                      __global const value_type* restrict coarse_x, __global value_type* restrict x)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const int row = k == 1 ? idx : idx / k;
    x[idx] += coarse_x[agg[row] * k + COLUMN(idx, k)];
}

// y = x + P e read on the fly; x_new = y + beta D^-1 (b - A y)
__kernel void prolong_relax(const int size, const int k, const real_type beta,
                            __global const index_type* restrict row_ptrs,
                            __global const index_type* restrict col_idxs,
                            __global const value_type* restrict values,
                            __global const value_type* restrict inv_diag,
                            __global const index_type* restrict agg,
                            __global const value_type* restrict coarse_x,
                            __global const value_type* restrict b,
                            __global const value_type* restrict x,
                            __global value_type* restrict x_new)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const int row = k == 1 ? idx : idx / k, c = COLUMN(idx, k);
    value_type ay = 0;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const int col = col_idxs[e];
        ay += mul(values[e], x[col * k + c] + coarse_x[agg[col] * k + c]);
    }
    const value_type y = x[idx] + coarse_x[agg[row] * k + c];
    x_new[idx] = y + beta * mul(inv_diag[row], b[idx] - ay);
}
