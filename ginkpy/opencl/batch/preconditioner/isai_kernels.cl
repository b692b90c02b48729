// Kernels of the batched ISAI: every row of every item's approximate inverses of its ILU(0)
// factors, and the apply. The inverses: row pointers m_ptrs (M_L's n + 1, then M_U's), column
// indices m_cols and per item (m_nnz values) M_L's values, then (from lower_nnz) M_U's.
#include "common.cl"

// Work-item e = item * 2n + r: row r of M_L (r < n) or row r - n of M_U of the item. With J the
// row's sorted pattern, T[J, J]^T y = e_i: for L (unit diagonal, its strictly lower entries in
// the factors' values before each row's diagonal) an upper triangular system, solved backward;
// for U (from the diagonal on) a lower triangular one, solved forward. A row whose values are
// not finite lowers *bad to e.
__kernel void generate(const int size, const int n, const int nnz, const int m_nnz, const int lower_nnz,
                       __global const int* row_ptrs, __global const int* col_idxs, __global const int* diag,
                       __global const value_type* factors, __global const int* m_ptrs,
                       __global const int* m_cols, __global value_type* m_values, __global int* bad)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    const int item = e / (2 * n);
    const int r = e - item * 2 * n;
    const int upper = r >= n;
    const int i = upper ? r - n : r;
    const int begin = upper ? lower_nnz + m_ptrs[n + 1 + i] : m_ptrs[i];
    const int m = upper ? m_ptrs[n + 2 + i] - m_ptrs[n + 1 + i] : m_ptrs[i + 1] - m_ptrs[i];
    __global const int* J = m_cols + begin;
    __global value_type* y = m_values + (size_t)item * m_nnz + begin;
    __global const value_type* f = factors + (size_t)item * nnz;
    int finite = 1;
    if (!upper) {
        // y_a = [J_a == i] - sum_{b > a} L[J_b, J_a] y_b
        for (int a = m - 1; a >= 0; --a) {
            value_type acc = to_value(J[a] == i ? 1 : 0);
            for (int b = a + 1; b < m; ++b) {
                const int p = find_column(col_idxs, row_ptrs[J[b]], diag[J[b]], J[a]);
                if (p >= 0) acc -= mul(f[p], y[b]);
            }
            y[a] = acc;
            finite &= is_finite_value(acc);
        }
    } else {
        // y_a = ([J_a == i] - sum_{b < a} U[J_b, J_a] y_b) / U[J_a, J_a]
        for (int a = 0; a < m; ++a) {
            value_type acc = to_value(J[a] == i ? 1 : 0);
            for (int b = 0; b < a; ++b) {
                const int p = find_column(col_idxs, diag[J[b]], row_ptrs[J[b] + 1], J[a]);
                if (p >= 0) acc -= mul(f[p], y[b]);
            }
            y[a] = divide(acc, f[diag[J[a]]]);
            finite &= is_finite_value(y[a]);
        }
    }
    if (!finite) atomic_min(bad, e);
}

// y_i = M_i v_i with one of the two inverses (its row pointers from m_ptrs + ptr_offset, its
// entries from `offset`); work-item e = (item * n + row) * k + column.
__kernel void multiply(const int size, const int n, const int k, const int m_nnz, const int ptr_offset,
                       const int offset, __global const int* m_ptrs, __global const int* m_cols,
                       __global const value_type* m_values, __global const value_type* v, __global value_type* y)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    BATCH_ENTRY(e, n, k, item, row, col);
    __global const value_type* m = m_values + (size_t)item * m_nnz + offset;
    __global const int* c = m_cols + offset;
    __global const value_type* vi = v + (size_t)item * n * k + col;
    value_type acc = 0;
    for (int p = m_ptrs[ptr_offset + row]; p < m_ptrs[ptr_offset + row + 1]; ++p) acc += mul(m[p], vi[c[p] * k]);
    y[e] = acc;
}
