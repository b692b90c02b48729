// The (S)SOR and Gauss-Seidel preconditioners' factors: the values of L and U written into
// the patterns of factorization.factorization.initialize_l_u (L: A's lower part, the diagonal
// last in each row; U: A's upper part, the diagonal first). One work-item per row.
#include "common.cl"

// l = D / omega + L_A;  u (where has_u) = D^-1 (D + omega U_A) / (2 - omega) where symmetric
// (SSOR), else D / omega + U_A (the backward sweep). A zero diagonal entry lowers *bad_row to
// its row.
__kernel void initialize_weighted_l_u(const int n, const real_type omega, const int has_u, const int symmetric,
                                      __global const int* a_row_ptrs, __global const value_type* a_values,
                                      __global const int* l_row_ptrs, __global value_type* l_values,
                                      __global const int* u_row_ptrs, __global value_type* u_values,
                                      __global int* bad_row)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int begin = a_row_ptrs[i];
        const int l_begin = l_row_ptrs[i];
        const int l_count = l_row_ptrs[i + 1] - l_begin;
        const int d = begin + l_count - 1;  // the diagonal's position in A
        const value_type diag = a_values[d];
        if (is_zero(diag)) atomic_min(bad_row, i);
        for (int t = 0; t < l_count - 1; ++t) l_values[l_begin + t] = a_values[begin + t];
        l_values[l_begin + l_count - 1] = diag / omega;
        if (has_u) {
            const int u_begin = u_row_ptrs[i];
            const int u_count = u_row_ptrs[i + 1] - u_begin;
            // symmetric: u_ij = omega a_ij / ((2 - omega) a_ii), u_ii = 1 / (2 - omega)
            const value_type scale = is_zero(diag) ? to_value(0) : divide(to_value(omega / (2 - omega)), diag);
            u_values[u_begin] = symmetric ? to_value(1 / (2 - omega)) : diag / omega;
            for (int t = 1; t < u_count; ++t) {
                u_values[u_begin + t] = symmetric ? mul(a_values[d + t], scale) : a_values[d + t];
            }
        }
    }
}
