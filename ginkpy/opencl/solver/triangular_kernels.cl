// Sparse triangular solve by level scheduling. The host groups the rows by dependency level and
// stores the strict triangle with its rows in level order (position p holds row rows[p]); the
// rows of one level only need x of rows in earlier levels, so they are solved in parallel.
// x and b are n x k row-major; one work-item solves one (row, column) pair.
#include "common.cl"

// x_row = (b_row - sum_j a_row,j x_j) / a_row,row for the row at level-order position pos
inline void solve_row(const int pos, const int c, const int k, __global const int* rows,
                      __global const int* row_ptrs, __global const int* col_idxs,
                      __global const value_type* values, __global const value_type* diag,
                      __global const value_type* b, __global value_type* x)
{
    const int row = rows[pos];
    value_type sum = 0;
    for (int nz = row_ptrs[pos]; nz < row_ptrs[pos + 1]; ++nz) {
        sum += mul(values[nz], x[col_idxs[nz] * k + c]);
    }
    x[row * k + c] = divide(b[row * k + c] - sum, diag[pos]);
}

// One wide level: the positions begin..end, every (row, column) pair its own work-item.
__kernel void solve_level(const int begin, const int end, const int k, __global const int* rows,
                          __global const int* row_ptrs, __global const int* col_idxs,
                          __global const value_type* values, __global const value_type* diag,
                          __global const value_type* b, __global value_type* x)
{
    const int id = get_global_id(0);
    if (id < (end - begin) * k) {
        solve_row(begin + id / k, id % k, k, rows, row_ptrs, col_idxs, values, diag, b, x);
    }
}

// A run of thin levels first_level..last_level in ONE work-group: its work-items share out each
// level's pairs, and a barrier (which orders global memory within the work-group) separates the
// levels, so one launch replaces one launch per level. No waiting between work-groups.
__kernel void solve_chain(const int first_level, const int last_level,
                          __global const int* level_ptrs, const int k, __global const int* rows,
                          __global const int* row_ptrs, __global const int* col_idxs,
                          __global const value_type* values, __global const value_type* diag,
                          __global const value_type* b, __global value_type* x)
{
    const int lid = get_local_id(0);
    const int wg = get_local_size(0);
    for (int level = first_level; level < last_level; ++level) {
        const int begin = level_ptrs[level];
        const int pairs = (level_ptrs[level + 1] - begin) * k;
        for (int id = lid; id < pairs; id += wg) {
            solve_row(begin + id / k, id % k, k, rows, row_ptrs, col_idxs, values, diag, b, x);
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

// ---- the substitution of a CPU device: all rows in order, one work-item per column ----
//
// Forward (LOWER, a compile-time switch) or backward. Each row is split at generate into
// inv_diag_i = 1 / a_ii, near_i = a_i,near / a_ii for the entry of the row solved just before
// (near = i - 1 forward, i + 1 backward; 0 where the row has none) and its other entries of the
// triangle, scaled by 1 / a_ii, in CSR arrays of their own, so that
//   x_i = inv_diag_i b_i - sum_j (a_ij / a_ii) x_j - near_i x_near
// reads no entry of the other triangle or of the diagonal and compares no column, and the
// chain from row to row (a stencil's neighbour) is one multiply-add on x_near kept in a
// register instead of a sum through x stored and loaded again: on a 2-core EPYC (PoCL, 2D
// convection-diffusion 500^2, the lower triangle) 0.4-0.5 ms against 1.5 ms on the whole
// triangle's arrays (an ad-hoc kernel timing, 2026-12-07).

inline int near_row(const int i)
{
#if LOWER
    return i - 1;
#else
    return i + 1;
#endif
}

// Whether column j of row i is one of the row's other entries (in the triangle, not the
// diagonal, not the nearest).
inline bool is_other(const int i, const int j)
{
#if LOWER
    return j < i - 1;
#else
    return j > i + 1;
#endif
}

// 1 / d of row i, or 0 where d is zero, which records the row in bad_row (the least such row
// stays: the host names it)
inline value_type checked_inverse(const value_type d, const int i, __global int* bad_row)
{
    if (is_zero(d)) {
        atomic_min(bad_row, i);
        return to_value(0);
    }
    return divide(to_value(1), d);
}

// The split, first half (one work-item per row): inv_diag, near and the count of the other
// entries into counts[i]; a row whose diagonal entry is zero or not stored lowers *bad_row
// to its index (as jacobi_generate). The diagonal's inverse is 0 on such a row.
__kernel void sequential_count(const int n, const int unit_diagonal, __global const int* row_ptrs,
                               __global const int* col_idxs, __global const value_type* values,
                               __global value_type* inv_diag, __global value_type* near,
                               __global int* counts, __global int* bad_row)
{
    const int i = get_global_id(0);
    if (i < n) {
        value_type d = to_value(1);
        value_type a_near = 0;
        int count = 0;
        if (!unit_diagonal) d = 0;
        for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
            const int j = col_idxs[p];
            if (j == i && !unit_diagonal) d = values[p];
            if (j == near_row(i)) a_near = values[p];
            count += is_other(i, j);
        }
        const value_type inv = checked_inverse(d, i, bad_row);
        inv_diag[i] = inv;
        near[i] = mul(inv, a_near);
        counts[i] = count;
    }
}

// The split, second half (one work-item per row, after the prefix sum of the counts): the
// other entries, scaled by the row's inv_diag, at out_ptrs[i].
__kernel void sequential_fill(const int n, __global const int* row_ptrs, __global const int* col_idxs,
                              __global const value_type* values, __global const value_type* inv_diag,
                              __global const int* out_ptrs, __global int* out_cols,
                              __global value_type* out_values)
{
    const int i = get_global_id(0);
    if (i < n) {
        const value_type inv = inv_diag[i];
        int q = out_ptrs[i];
        for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
            const int j = col_idxs[p];
            if (is_other(i, j)) {
                out_cols[q] = j;
                out_values[q] = mul(inv, values[p]);
                ++q;
            }
        }
    }
}

// The substitution on the split arrays.
__kernel void solve_sequential(const int n, const int k, __global const int* row_ptrs,
                               __global const int* col_idxs, __global const value_type* values,
                               __global const value_type* inv_diag, __global const value_type* near,
                               __global const value_type* b, __global value_type* x)
{
    const int c = get_global_id(0);
    if (c < k) {
        value_type near_x = 0;  // x of the row solved last
        for (int step = 0; step < n; ++step) {
#if LOWER
            const int i = step;
#else
            const int i = n - 1 - step;
#endif
            value_type sum = mul(inv_diag[i], b[i * k + c]);
            for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
                sum -= mul(values[p], x[col_idxs[p] * k + c]);
            }
            // (a row without the entry skips it: 0 times an infinite x_near is not 0)
            if (!is_zero(near[i])) sum -= mul(near[i], near_x);
            near_x = sum;
            x[i * k + c] = near_x;
        }
    }
}

// ---- the "jacobi" algorithm: x <- D^-1 (b - N x), D the diagonal, N the strict triangle ----

// inv_diag = D^-1 (ones with unit_diagonal); a row whose diagonal entry is zero or not stored
// lowers *bad_row to its index. One work-item per row.
__kernel void jacobi_generate(const int n, const int unit_diagonal, __global const int* row_ptrs,
                              __global const int* col_idxs, __global const value_type* values,
                              __global value_type* inv_diag, __global int* bad_row)
{
    const int i = get_global_id(0);
    if (i < n) {
        value_type d = to_value(1);
        if (!unit_diagonal) {
            d = 0;
            for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
                if (col_idxs[p] == i) d = values[p];
            }
        }
        inv_diag[i] = checked_inverse(d, i, bad_row);
    }
}

// x = D^-1 b, one work-item per entry
__kernel void jacobi_initialize(const int size, const int k, __global const value_type* inv_diag,
                                __global const value_type* b, __global value_type* x)
{
    const int id = get_global_id(0);
    if (id < size) x[id] = mul(inv_diag[k == 1 ? id : id / k], b[id]);
}

// the entry at position p of row i where it lies on the solved side of the diagonal (LOWER: left
// of it, else right of it), else 0
inline value_type solved_side(__global const value_type* values, const int p, const int i, const int j)
{
#if LOWER
    return j < i ? values[p] : 0;
#else
    return j > i ? values[p] : 0;
#endif
}

// (N D^-1 b)_i, column c: row i's solved side against D^-1 b
inline value_type off_diagonal_of_scaled_b(const int i, const int k, const int c, __global const int* row_ptrs,
                                           __global const int* col_idxs, __global const value_type* values,
                                           __global const value_type* inv_diag, __global const value_type* b)
{
    value_type sum = 0;
    for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
        const int j = col_idxs[p];
        sum += mul(solved_side(values, p, i, j), mul(inv_diag[j], b[j * k + c]));
    }
    return sum;
}

// out = D^-1 (b - N y), one work-item per (row, column): N the entries of row i on the solved side
// of the diagonal (LOWER: left of it, else right of it; a compile-time switch), y at its columns j
//   from_zero 0: x_j (a sweep from x)
//   from_zero 2: D^-1 b at row j, the first sweep from x = 0 (two sweeps in one launch)
//   from_zero 3: x2_j = D^-1 (b - N D^-1 b) at row j, the second sweep from x = 0 recomputed from
//                b at row j's columns (three sweeps in one launch)
__kernel void jacobi_sweep(const int size, const int k, __global const int* row_ptrs,
                           __global const int* col_idxs, __global const value_type* values,
                           __global const value_type* inv_diag, __global const value_type* b,
                           __global const value_type* x, __global value_type* out, const int from_zero)
{
    const int id = get_global_id(0);
    if (id < size) {
        const int i = k == 1 ? id : id / k;
        const int c = COLUMN(id, k);
        value_type sum = 0;
        for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
            const int j = col_idxs[p];
            const value_type v = solved_side(values, p, i, j);
            if (is_zero(v)) continue;  // (the diagonal and the other side)
            const value_type inner = from_zero == 3
                ? off_diagonal_of_scaled_b(j, k, c, row_ptrs, col_idxs, values, inv_diag, b) : 0;
            sum += mul(v, from_zero ? mul(inv_diag[j], b[j * k + c] - inner) : x[j * k + c]);
        }
        out[id] = mul(inv_diag[i], b[id] - sum);
    }
}

// Per work-group g: partial[3 g] the max over its rows i of |d_i|^-1 sum_{j in N_i} |a_ij|, the
// row's bound on the contraction of a Jacobi sweep (N_i: the strict triangle's columns, left of
// the diagonal with LOWER, else right; d_i = 1 with unit_diagonal, INFINITY where it is zero or
// not stored); partial[3 g + 1] the max of sum_{j in N_i} (entries of row j), the work of row i
// in jacobi_sweep's three sweeps; partial[3 g + 2] 1 where a row has a zero or missing diagonal
// (not unit_diagonal) or a value that is not finite, else 0. One work-item per row,
// max-reductions in local memory.
__kernel void jacobi_bound(const int n, const int unit_diagonal, __global const int* row_ptrs,
                           __global const int* col_idxs, __global const value_type* values,
                           __global real_type* partial, __local real_type* slot)
{
    const int i = get_global_id(0);
    const int t = get_local_id(0);
    const int wg = get_local_size(0);
    real_type q = 0, work = 0, bad = 0;
    if (i < n) {
        real_type off = 0, diag = unit_diagonal ? 1 : 0;
        for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) {
            const int j = col_idxs[p];
            const real_type magnitude = abs_value(values[p]);
#if LOWER
            const bool strict = j < i;
#else
            const bool strict = j > i;
#endif
            if (strict) {
                off += magnitude;
                work += row_ptrs[j + 1] - row_ptrs[j];
            }
            if (j == i && !unit_diagonal) diag = magnitude;
            if (!isfinite(magnitude)) bad = 1;
        }
        if (diag == 0) bad = 1;
        q = diag == 0 ? INFINITY : off / diag;
    }
    slot[t] = q;
    slot[wg + t] = work;
    slot[2 * wg + t] = bad;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = wg / 2; s > 0; s /= 2) {
        if (t < s) {
            slot[t] = fmax(slot[t], slot[t + s]);
            slot[wg + t] = fmax(slot[wg + t], slot[wg + t + s]);
            slot[2 * wg + t] = fmax(slot[2 * wg + t], slot[2 * wg + t + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t == 0) {
        partial[3 * get_group_id(0)] = slot[0];
        partial[3 * get_group_id(0) + 1] = slot[wg];
        partial[3 * get_group_id(0) + 2] = slot[2 * wg];
    }
}
