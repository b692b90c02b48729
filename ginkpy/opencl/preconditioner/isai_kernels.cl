// ISAI: every row i of the approximate inverse M from a small dense system, one work-item per
// row. With J the sorted columns of M's row i: w = S[J, J]^T (S the system matrix restricted to
// J, transposed), y = e_i at i's place in J; w y = e_i is solved by Gaussian elimination with
// partial pivoting in the row's block of the global workspace (m x m, row-major), y in place in
// M's values. spd: y is scaled by 1/sqrt(y_i) (i is the last column of a lower pattern; y_i is
// real for a Hermitian positive definite S: its real part is taken).
#include "common.cl"

__kernel void generate_inverse(const int first_row, const int last_row, const int spd,
                               __global const int* s_row_ptrs, __global const int* s_col_idxs,
                               __global const value_type* s_values, __global const int* m_row_ptrs,
                               __global const int* m_col_idxs, __global value_type* m_values,
                               __global const long* offsets, __global value_type* work,
                               __global int* bad_row)
{
    const int i = first_row + get_global_id(0);
    if (i >= last_row) return;
    const int begin = m_row_ptrs[i];
    const int m = m_row_ptrs[i + 1] - begin;
    __global const int* J = m_col_idxs + begin;
    __global value_type* y = m_values + begin;
    __global value_type* w = work + offsets[i - first_row];
    for (int e = 0; e < m * m; ++e) w[e] = 0;
    // column b of w is S's row J_b restricted to J: merge the two sorted index lists
    for (int b = 0; b < m; ++b) {
        const int row = J[b];
        int p = s_row_ptrs[row];
        const int end = s_row_ptrs[row + 1];
        int a = 0;
        while (p < end && a < m) {
            const int c = s_col_idxs[p];
            const int t = J[a];
            if (c == t) {
                w[a * m + b] = s_values[p];
                ++p;
                ++a;
            } else if (c < t) {
                ++p;
            } else {
                ++a;
            }
        }
        y[b] = to_value(row == i ? 1 : 0);
    }
    for (int c = 0; c < m; ++c) {
        int piv = c;
        real_type best = abs_value(w[c * m + c]);
        for (int r = c + 1; r < m; ++r) {
            if (abs_value(w[r * m + c]) > best) {
                best = abs_value(w[r * m + c]);
                piv = r;
            }
        }
        if (best == 0) {
            atomic_min(bad_row, i);
            return;
        }
        for (int cc = c; cc < m; ++cc) {
            const value_type t = w[c * m + cc];
            w[c * m + cc] = w[piv * m + cc];
            w[piv * m + cc] = t;
        }
        const value_type t = y[c];
        y[c] = y[piv];
        y[piv] = t;
        // row r -= f row c, f = w_rc / w_cc
        for (int r = c + 1; r < m; ++r) {
            const value_type f = divide(w[r * m + c], w[c * m + c]);
            for (int cc = c + 1; cc < m; ++cc) w[r * m + cc] -= mul(f, w[c * m + cc]);
            y[r] -= mul(f, y[c]);
        }
    }
    for (int r = m - 1; r >= 0; --r) {
        value_type s = y[r];
        for (int c = r + 1; c < m; ++c) s -= mul(w[r * m + c], y[c]);
        y[r] = divide(s, w[r * m + r]);
    }
    if (spd) {
        const real_type d = real_part(y[m - 1]);
        if (!(d > 0)) {
            atomic_min(bad_row, i);
            return;
        }
        const real_type scale = 1 / sqrt(d);
        for (int r = 0; r < m; ++r) y[r] *= scale;
    }
}
