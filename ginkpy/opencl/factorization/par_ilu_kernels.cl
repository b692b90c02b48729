// ParILU sweeps: every entry of one factor recomputed from the others, one work-item per entry.
// L is unit lower (the diagonal last in each row), U upper (the diagonal first in each row);
// A's entry of a factor entry at position p of row i is found from A's row i: L's entries are
// A's first ones in the row, U's its last ones. The sums run over k in increasing order and
// find u_kj in U's row k by binary search, so no transposed copy of U is needed.
// ParIC's sources include this one with SYMMETRIC 1: its sweep of L (A ~ L L^H) is sweep_l with
// L's own rows in place of U (no U is formed while it sweeps).
#include "common.cl"
#ifndef SYMMETRIC
#define SYMMETRIC 0
#endif

// sum_k l_ik u_kj over the entries k of L's row i at positions begin..end
inline value_type sum_l_u(const int begin, const int end, const int j,
                          __global const int* l_col_idxs, __global const value_type* l_values,
                          __global const int* u_row_ptrs, __global const int* u_col_idxs,
                          __global const value_type* u_values)
{
    value_type sum = 0;
    for (int q = begin; q < end; ++q) {
        const int k = l_col_idxs[q];
        const int r = find_column(u_col_idxs, u_row_ptrs[k], u_row_ptrs[k + 1], j);
        if (r >= 0) sum += mul(l_values[q], u_values[r]);
    }
    return sum;
}

// u_ij = a_ij - sum_{k<i} l_ik u_kj; a pivot u_ii not above floors[i] becomes the floor with
// its sign (a zero one: positive; a zero floor: 1)
__kernel void sweep_u(const int nnz, __global const int* a_row_ptrs,
                      __global const value_type* a_values, __global const int* l_row_ptrs,
                      __global const int* l_col_idxs, __global const value_type* l_values,
                      __global const int* u_row_ptrs, __global const int* u_col_idxs,
                      __global const value_type* u_values, __global const int* u_rows,
                      __global const real_type* floors, __global value_type* u_out)
{
    const int p = get_global_id(0);
    if (p < nnz) {
        const int i = u_rows[p];
        const value_type a = a_values[a_row_ptrs[i + 1] - (u_row_ptrs[i + 1] - p)];
        // k < i: L's row i without its diagonal
        value_type u = a - sum_l_u(l_row_ptrs[i], l_row_ptrs[i + 1] - 1, u_col_idxs[p], l_col_idxs,
                                   l_values, u_row_ptrs, u_col_idxs, u_values);
        if (p == u_row_ptrs[i]) {
            const real_type floor = floors[i] > 0 ? floors[i] : 1;
            const real_type magnitude = abs_value(u);
            if (magnitude <= floor) u = magnitude > 0 ? u * (floor / magnitude) : to_value(floor);
        }
        u_out[p] = u;
    }
}

#if SYMMETRIC
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

#endif

// l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj, the unit diagonal kept (ParILU); with SYMMETRIC
// l_ij = (a_ij - sum_{k<j} l_ik conj(l_jk)) / l_jj, l_jj real, the diagonal copied (ParIC: the
// u_* arguments are unused)
__kernel void sweep_l(const int nnz, __global const int* a_row_ptrs,
                      __global const value_type* a_values, __global const int* l_row_ptrs,
                      __global const int* l_col_idxs, __global const value_type* l_values,
                      __global const int* l_rows, __global const int* u_row_ptrs,
                      __global const int* u_col_idxs, __global const value_type* u_values,
                      __global value_type* l_out)
{
    const int p = get_global_id(0);
    if (p < nnz) {
        const int i = l_rows[p];
        const int j = l_col_idxs[p];
        if (j == i) {
            l_out[p] = SYMMETRIC ? l_values[p] : to_value(1);
        } else {
            const value_type a = a_values[a_row_ptrs[i] + (p - l_row_ptrs[i])];
            // k < j: the entries of L's row i before p
#if SYMMETRIC
            const value_type sum = sum_l_l(l_row_ptrs[i], p, l_row_ptrs[j], l_row_ptrs[j + 1] - 1, j,
                                           l_col_idxs, l_values);
            const value_type pivot = to_value(real_part(l_values[l_row_ptrs[j + 1] - 1]));
#else
            const value_type sum = sum_l_u(l_row_ptrs[i], p, j, l_col_idxs, l_values, u_row_ptrs,
                                           u_col_idxs, u_values);
            const value_type pivot = u_values[u_row_ptrs[j]];
#endif
            l_out[p] = divide(a - sum, pivot);
        }
    }
}
