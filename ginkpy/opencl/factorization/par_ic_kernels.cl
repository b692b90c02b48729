// ParIC sweeps on L (lower, the diagonal last in each row, real and positive); A's entry of L's
// entry at position p of row i is at the same offset in A's row i. For complex values A = L L^H
// (A Hermitian): the sums take conj(l_jk). sum_{k<j} l_ik conj(l_jk) merges L's rows i and j
// (both sorted) in increasing k: ParILU's sweep_l with SYMMETRIC.
#define SYMMETRIC 1
#include "factorization/par_ilu_kernels.cl"  // common.cl, sweep_l

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
