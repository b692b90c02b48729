// Kernels of the batched ISAI: gathering the items' factors from their ILU(0) values, and the
// apply. values holds per item (stride entries) M_L's values, then (from lower_nnz) M_U's.
#include "common.cl"

// out[i, t] = values[i, positions[t]], or 1 where positions[t] is -1; work-item e = i * m + t.
__kernel void gather_factors(const int size, const int m, const int nnz, __global const value_type* values,
                             __global const int* positions, __global value_type* out)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    const int item = e / m;
    const int t = e - item * m;
    const int p = positions[t];
    out[e] = p >= 0 ? values[(size_t)item * nnz + p] : to_value(1);
}

// y_i = M_i v_i with one of the two inverses (its pattern, its values at `offset` in each item's
// stride); work-item e = (item * n + row) * k + column.
__kernel void multiply(const int size, const int n, const int k, const int stride, const int offset,
                       __global const int* row_ptrs, __global const int* col_idxs,
                       __global const value_type* values, __global const value_type* v, __global value_type* y)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    const int col = COLUMN(e, k);
    const int item = e / (n * k);
    const int row = e / k - item * n;
    __global const value_type* m = values + (size_t)item * stride + offset;
    __global const value_type* vi = v + (size_t)item * n * k + col;
    value_type acc = 0;
    for (int p = row_ptrs[row]; p < row_ptrs[row + 1]; ++p) acc += mul(m[p], vi[col_idxs[p] * k]);
    y[e] = acc;
}
