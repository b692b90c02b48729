// Kernels of the batched ILU(0): the numeric factorization of every item and the apply. The
// factors of an item are its values (nnz per item) in the shared pattern: L's strictly lower
// entries (its diagonal is 1) and U's upper entries; diag holds each row's diagonal position.
#include "common.cl"

// ILU(0) of item get_global_id(0), row by row (IKJ): l_ik = a_ik / u_kk for the entries left of
// the diagonal in column order, each followed by a_ij -= l_ik u_kj for the j > k of row k that
// row i holds (both rows sorted: a merge). bad_rows[item]: the first row whose pivot is zero or
// not finite, -1 if none.
__kernel void factorize(const int num_items, const int n, const int nnz, __global const int* row_ptrs,
                        __global const int* col_idxs, __global const int* diag, __global value_type* values,
                        __global int* bad_rows)
{
    const int item = get_global_id(0);
    if (item >= num_items) return;
    __global value_type* v = values + (size_t)item * nnz;
    int bad = -1;
    for (int i = 0; i < n; ++i) {
        const int end = row_ptrs[i + 1];
        for (int p = row_ptrs[i]; p < diag[i]; ++p) {
            const int k = col_idxs[p];
            const value_type l = divide(v[p], v[diag[k]]);
            v[p] = l;
            int q = p + 1;
            for (int r = diag[k] + 1; r < row_ptrs[k + 1]; ++r) {
                const int j = col_idxs[r];
                while (q < end && col_idxs[q] < j) ++q;
                if (q < end && col_idxs[q] == j) v[q] -= mul(l, v[r]);
            }
        }
        const value_type pivot = v[diag[i]];
        if (bad < 0 && (is_zero(pivot) || !is_finite_value(pivot))) bad = i;
    }
    bad_rows[item] = bad;
}

// x_i = U_i^-1 (L_i^-1 b_i): work-item (item, column) e = item * k + column substitutes forward
// then backward, in place in x.
__kernel void apply(const int size, const int n, const int k, const int nnz, __global const int* row_ptrs,
                    __global const int* col_idxs, __global const int* diag, __global const value_type* values,
                    __global const value_type* b, __global value_type* x)
{
    const int e = get_global_id(0);
    if (e >= size) return;
    const int item = e / k;
    const int col = e - item * k;
    __global const value_type* v = values + (size_t)item * nnz;
    __global const value_type* bi = b + (size_t)item * n * k + col;
    __global value_type* xi = x + (size_t)item * n * k + col;
    for (int i = 0; i < n; ++i) {
        value_type acc = bi[i * k];
        for (int p = row_ptrs[i]; p < diag[i]; ++p) acc -= mul(v[p], xi[col_idxs[p] * k]);
        xi[i * k] = acc;
    }
    for (int i = n - 1; i >= 0; --i) {
        value_type acc = xi[i * k];
        for (int p = diag[i] + 1; p < row_ptrs[i + 1]; ++p) acc -= mul(v[p], xi[col_idxs[p] * k]);
        xi[i * k] = divide(acc, v[diag[i]]);
    }
}
