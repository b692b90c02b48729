// ParIC sweeps on L (lower, the diagonal last in each row, real and positive); A's entry of L's
// entry at position p of row i is at the same offset in A's row i. For complex values A = L L^H
// (A Hermitian): the sums take conj(l_jk). sum_{k<j} l_ik conj(l_jk) merges L's rows i and j
// (both sorted) in increasing k.
#include "common.cl"

// sum of l_ik conj(l_jk) over the common columns k < j of L's rows i (positions bi..) and j
// (positions bj..)
inline value_type sum_l_l(int bi, const int ei, int bj, const int ej, const int j,
                          __global const int* l_col_idxs, __global const value_type* l_values)
{
    value_type sum = 0;
    while (bi < ei && bj < ej) {
        const int ci = l_col_idxs[bi];
        const int cj = l_col_idxs[bj];
        if (ci >= j || cj >= j) break;
        if (ci == cj) {
            sum += mul_conj(l_values[bj], l_values[bi]);
            ++bi;
            ++bj;
        } else if (ci < cj) {
            ++bi;
        } else {
            ++bj;
        }
    }
    return sum;
}

// l_ii = sqrt((1 + shift) a_ii - sum_{k<i} |l_ik|^2), in place (it reads only row i's
// off-diagonal entries; of a complex a_ii the real part); one work-item per row
__kernel void sweep_diagonal(const int n, const real_type shift, __global const int* a_row_ptrs,
                             __global const value_type* a_values, __global const int* l_row_ptrs,
                             __global const int* l_col_idxs, __global value_type* l_values)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int begin = l_row_ptrs[i];
        const int d = l_row_ptrs[i + 1] - 1;
        real_type sum = 0;
        for (int q = begin; q < d; ++q) sum += abs2(l_values[q]);
        l_values[d] = to_value(sqrt((1 + shift) * real_part(a_values[a_row_ptrs[i] + (d - begin)]) - sum));
    }
}

// l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj (l_jj real); the diagonal is copied. One
// work-item per entry.
__kernel void sweep_off_diagonal(const int nnz, __global const int* a_row_ptrs,
                                 __global const value_type* a_values,
                                 __global const int* l_row_ptrs, __global const int* l_col_idxs,
                                 __global const value_type* l_values, __global const int* l_rows,
                                 __global value_type* l_out)
{
    const int p = get_global_id(0);
    if (p < nnz) {
        const int i = l_rows[p];
        const int j = l_col_idxs[p];
        if (j == i) {
            l_out[p] = l_values[p];
        } else {
            const value_type a = a_values[a_row_ptrs[i] + (p - l_row_ptrs[i])];
            const value_type sum = sum_l_l(l_row_ptrs[i], p, l_row_ptrs[j], l_row_ptrs[j + 1] - 1, j,
                                           l_col_idxs, l_values);
            l_out[p] = (a - sum) / real_part(l_values[l_row_ptrs[j + 1] - 1]);
        }
    }
}
