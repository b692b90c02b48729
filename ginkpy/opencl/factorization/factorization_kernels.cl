// Kernels shared by the fixed-point factorizations: the diagonal added where A lacks it, the
// patterns of the factors with their initial values, the pivots' floors and their checks. One
// work-item per row.
#include "common.cl"

// Each row's diagonal position and its entry counts in L (the strictly lower part and the
// diagonal) and in U (the diagonal and the upper part). A row whose diagonal is not stored
// (or, with `positive`, whose real part is not > 0: the diagonal of a Hermitian matrix is real)
// lowers *bad_row to its index.
__kernel void count_l_u(const int n, const int positive, __global const int* a_row_ptrs,
                        __global const int* a_col_idxs, __global const value_type* a_values,
                        __global int* diag, __global int* l_counts, __global int* u_counts,
                        __global int* bad_row)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int d = find_column(a_col_idxs, a_row_ptrs[i], a_row_ptrs[i + 1], i);
        const int valid = d >= 0 && (!positive || real_part(a_values[d]) > 0);
        if (!valid) atomic_min(bad_row, i);
        diag[i] = d;
        l_counts[i] = valid ? d - a_row_ptrs[i] + 1 : 0;
        u_counts[i] = valid ? a_row_ptrs[i + 1] - d : 0;
    }
}

// L = A's strictly lower part scaled by the pivots (l_ij = a_ij / a_jj, a_ij where a_jj is 0)
// and a unit diagonal; U = A's upper part.
__kernel void initialize_l_u(const int n, __global const int* a_row_ptrs,
                             __global const int* a_col_idxs, __global const value_type* a_values,
                             __global const int* diag, __global const int* l_row_ptrs,
                             __global int* l_col_idxs, __global value_type* l_values,
                             __global const int* u_row_ptrs, __global int* u_col_idxs,
                             __global value_type* u_values)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int begin = a_row_ptrs[i];
        const int d = diag[i];
        int q = l_row_ptrs[i];
        for (int p = begin; p < d; ++p, ++q) {
            const int j = a_col_idxs[p];
            const value_type pivot = a_values[diag[j]];
            l_col_idxs[q] = j;
            l_values[q] = is_zero(pivot) ? a_values[p] : divide(a_values[p], pivot);
        }
        l_col_idxs[q] = i;
        l_values[q] = to_value(1);
        q = u_row_ptrs[i];
        for (int p = d; p < a_row_ptrs[i + 1]; ++p, ++q) {
            u_col_idxs[q] = a_col_idxs[p];
            u_values[q] = a_values[p];
        }
    }
}

// L = A's lower part with l_ij = a_ij / sqrt(a_jj') and l_ii = sqrt(a_ii'), a_ii' = (1 + shift)
// a_ii (all a_ii > 0; of a Hermitian matrix the real parts).
__kernel void initialize_l(const int n, const real_type shift, __global const int* a_row_ptrs,
                           __global const int* a_col_idxs, __global const value_type* a_values,
                           __global const int* diag, __global const int* l_row_ptrs,
                           __global int* l_col_idxs, __global value_type* l_values)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int d = diag[i];
        int q = l_row_ptrs[i];
        for (int p = a_row_ptrs[i]; p < d; ++p, ++q) {
            const int j = a_col_idxs[p];
            l_col_idxs[q] = j;
            l_values[q] = a_values[p] / sqrt((1 + shift) * real_part(a_values[diag[j]]));
        }
        l_col_idxs[q] = i;
        l_values[q] = to_value(sqrt((1 + shift) * real_part(a_values[d])));
    }
}

// The length of every row with its diagonal entry (one more where A does not store it), at
// new_ptrs[i] (a prefix sum then makes the row pointers).
__kernel void count_with_diagonal(const int n, __global const int* row_ptrs, __global const int* col_idxs,
                                  __global int* new_ptrs)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int begin = row_ptrs[i], end = row_ptrs[i + 1];
        new_ptrs[i] = end - begin + (find_column(col_idxs, begin, end, i) < 0);
    }
}

// A's rows with a zero inserted on the diagonal where A does not store one (Ginkgo's
// add_diagonal_elements); the columns stay sorted.
__kernel void add_diagonal(const int n, __global const int* row_ptrs, __global const int* col_idxs,
                           __global const value_type* values, __global const int* new_ptrs,
                           __global int* new_cols, __global value_type* new_values)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int end = row_ptrs[i + 1];
        int q = new_ptrs[i];
        int missing = new_ptrs[i + 1] - q > end - row_ptrs[i];
        for (int p = row_ptrs[i]; p < end; ++p, ++q) {
            if (missing && col_idxs[p] > i) {
                new_cols[q] = i;
                new_values[q++] = 0;
                missing = 0;
            }
            new_cols[q] = col_idxs[p];
            new_values[q] = values[p];
        }
        if (missing) {
            new_cols[q] = i;
            new_values[q] = 0;
        }
    }
}

// floor_i = relative * sum_j |a_ij|: a pivot of row i not larger is replaced by the floor
__kernel void pivot_floors(const int n, const real_type relative, __global const int* row_ptrs,
                           __global const value_type* values, __global real_type* floors)
{
    const int i = get_global_id(0);
    if (i < n) {
        real_type sum = 0;
        for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) sum += abs_value(values[p]);
        floors[i] = relative * sum;
    }
}

// The rows whose pivot (last in a lower factor's row, first in an upper one's) sits on its floor
// (was replaced): their number and the first of them.
__kernel void floored_pivots(const int n, const int lower, __global const int* row_ptrs,
                             __global const value_type* values, __global const real_type* floors,
                             __global int* count, __global int* first)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int pos = lower ? row_ptrs[i + 1] - 1 : row_ptrs[i];
        const real_type floor = floors[i] > 0 ? floors[i] : 1;
        if (row_ptrs[i + 1] > row_ptrs[i] && abs_value(values[pos]) <= floor) {
            atomic_inc(count);
            atomic_min(first, i);
        }
    }
}

// Whether row i's pivot, its entry at pos (last in a lower factor's row, first in an upper
// one's), is stored, nonzero and finite.
inline bool valid_pivot(const int i, const int begin, const int end, const int pos, __global const int* col_idxs,
                        __global const value_type* values)
{
    return end > begin && col_idxs[pos] == i && !is_zero(values[pos]) && is_finite_value(values[pos]);
}

// The first row whose diagonal entry (last in a lower factor's row, first in an upper one's)
// is missing, zero or not finite lowers *bad_row to its index.
__kernel void find_invalid_pivot(const int n, const int lower, __global const int* row_ptrs,
                                 __global const int* col_idxs, __global const value_type* values,
                                 __global int* bad_row)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int begin = row_ptrs[i];
        const int end = row_ptrs[i + 1];
        if (!valid_pivot(i, begin, end, lower ? end - 1 : begin, col_idxs, values)) atomic_min(bad_row, i);
    }
}

// The checks of a factor into out[4] (set to {n, n, 0, n} before): out[0] lowered to the first
// row whose pivot (last in a lower factor's row, first in an upper one's) is missing, zero or not
// finite, out[1] to the first row holding a value that is not finite; with count_floored, out[2]
// counts the rows whose pivot is not above its floor (a zero floor: 1) and out[3] is lowered to
// the first of them. One work-item per row.
__kernel void check_factor(const int n, const int lower, const int count_floored, __global const int* row_ptrs,
                           __global const int* col_idxs, __global const value_type* values,
                           __global const real_type* floors, __global int* out)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int begin = row_ptrs[i];
        const int end = row_ptrs[i + 1];
        const int pos = lower ? end - 1 : begin;
        if (!valid_pivot(i, begin, end, pos, col_idxs, values)) atomic_min(out, i);
        for (int p = begin; p < end; ++p) {
            if (!is_finite_value(values[p])) {
                atomic_min(out + 1, i);
                break;
            }
        }
        if (count_floored && end > begin) {
            const real_type floor = floors[i] > 0 ? floors[i] : 1;
            if (abs_value(values[pos]) <= floor) {
                atomic_inc(out + 2);
                atomic_min(out + 3, i);
            }
        }
    }
}
