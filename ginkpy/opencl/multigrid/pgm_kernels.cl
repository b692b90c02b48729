// Kernels of Pgm (parallel graph match aggregation) and its Galerkin product; see
// reference/multigrid/pgm_kernels.py for what each computes. One work-item per row (or
// aggregate, or chunk of a scan). Every kernel but the in-place assign_to_exist_agg and the
// atomic fills (whose order find_aggregate_rows sorts afterwards) gives the same result on every
// device: ties are broken by a hash of the edge, coarse entries summed in a fixed order.
#include "common.cl"

#define UNAGG (-1)

// A 32-bit hash of the undirected edge {i, j} (the same seen from both rows).
inline uint edge_hash(const int i, const int j)
{
    uint x = (uint)min(i, j) * 0x9E3779B1u + (uint)max(i, j);
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

// (w, h, col) > (best_w, best_h, best_col), lexicographically
inline int stronger(const value_type w, const uint h, const int col, const value_type best_w,
                    const uint best_h, const int best_col)
{
    return w > best_w || (w == best_w && (h > best_h || (h == best_h && col > best_col)));
}

// a / b correctly rounded: in double where the device has it (OpenCL allows a float division
// 2.5 ulp off), so that weights, and the aggregates chosen from them, match on every device.
#if defined(cl_khr_fp64)
#define DIVIDE(a, b) ((value_type)((double)(a) / (double)(b)))
#else
#define DIVIDE(a, b) ((a) / (b))
#endif

// weights[e] of entry e = (row, col): (|a_rc| + |a_cr|) / 2 / max(|a_rr|, |a_cc|), 0 on the
// diagonal; a_cr found by binary search in row col (0 where it is not stored, which sets
// *nonsymmetric).
__kernel void compute_weights(const int n, __global const index_type* restrict row_ptrs,
                              __global const index_type* restrict col_idxs,
                              __global const value_type* restrict values,
                              __global const value_type* restrict diag,
                              __global value_type* restrict weights, __global int* restrict nonsymmetric)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const int col = col_idxs[e];
        if (col == row) {
            weights[e] = 0;
            continue;
        }
        value_type transposed = 0;
        int lo = row_ptrs[col], hi = row_ptrs[col + 1] - 1;
        while (lo <= hi) {
            const int mid = (lo + hi) / 2;
            const int c = col_idxs[mid];
            if (c == row) {
                transposed = values[mid];
                break;
            }
            if (c < row) lo = mid + 1;
            else hi = mid - 1;
        }
        if (lo > hi) *nonsymmetric = 1;
        const value_type sym = (fabs(values[e]) + fabs(transposed)) * (value_type)0.5;
        value_type d = fmax(fabs(diag[row]), fabs(diag[col]));
        if (d == 0) d = 1;
        weights[e] = DIVIDE(sym, d);
    }
}

// Per unaggregated row: its strongest unaggregated neighbour, else -2 - its strongest
// aggregated one, else itself.
__kernel void find_strongest_neighbor(const int n, __global const index_type* restrict row_ptrs,
                                      __global const index_type* restrict col_idxs,
                                      __global const value_type* restrict weights,
                                      __global const index_type* restrict agg,
                                      __global index_type* restrict strongest_neighbor)
{
    const int row = get_global_id(0);
    if (row >= n || agg[row] != UNAGG) return;
    value_type free_w = 0, taken_w = 0;
    uint free_h = 0, taken_h = 0;
    int free_col = -1, taken_col = -1;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const value_type w = weights[e];
        if (!(w > 0)) continue;
        const int col = col_idxs[e];
        const uint h = edge_hash(row, col);
        if (agg[col] == UNAGG) {
            if (free_col < 0 || stronger(w, h, col, free_w, free_h, free_col)) {
                free_w = w;
                free_h = h;
                free_col = col;
            }
        } else if (taken_col < 0 || stronger(w, h, col, taken_w, taken_h, taken_col)) {
            taken_w = w;
            taken_h = h;
            taken_col = col;
        }
    }
    strongest_neighbor[row] = free_col >= 0 ? free_col : taken_col >= 0 ? -2 - taken_col : row;
}

// Rows that chose each other form the aggregate named by the smaller; a row whose neighbours are
// all aggregated joins its strongest one's aggregate (fixed before this launch). A row written
// here by its partner reads either value of agg[i] and then writes nothing.
__kernel void match_edge(const int n, __global const index_type* restrict strongest_neighbor,
                         __global index_type* agg)
{
    const int i = get_global_id(0);
    if (i >= n || agg[i] != UNAGG) return;
    const int s = strongest_neighbor[i];
    if (s <= -2) {
        agg[i] = agg[-2 - s];
    } else if (s >= 0 && strongest_neighbor[s] == i && i <= s) {
        agg[i] = i;
        agg[s] = i;
    }
}

// The unaggregated rows of each chunk of `chunk` rows.
__kernel void count_unagg(const int n, const int chunk, __global const index_type* restrict agg,
                          __global int* restrict partial)
{
    const int g = get_global_id(0);
    const int begin = g * chunk;
    if (begin >= n) return;
    const int end = min(n, begin + chunk);
    int count = 0;
    for (int i = begin; i < end; i++) count += agg[i] == UNAGG;
    partial[g] = count;
}

// Rows still unaggregated join their strongest aggregated neighbour's aggregate, or form their
// own. out is another array (deterministic) or, with in_place, agg itself (a row may then see
// a neighbour assigned in this launch).
__kernel void assign_to_exist_agg(const int n, __global const index_type* restrict row_ptrs,
                                  __global const index_type* restrict col_idxs,
                                  __global const value_type* restrict weights,
                                  __global const index_type* agg, __global index_type* out,
                                  const int in_place)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    const int own = agg[row];
    if (own != UNAGG) {
        if (!in_place) out[row] = own;
        return;
    }
    value_type best_w = 0;
    uint best_h = 0;
    int best_col = -1;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const value_type w = weights[e];
        const int col = col_idxs[e];
        if (!(w > 0) || agg[col] == UNAGG) continue;
        const uint h = edge_hash(row, col);
        if (best_col < 0 || stronger(w, h, col, best_w, best_h, best_col)) {
            best_w = w;
            best_h = h;
            best_col = col;
        }
    }
    out[row] = best_col >= 0 ? agg[best_col] : row;
}

// used[agg[i]] = 1 (used cleared before)
__kernel void mark_used(const int n, __global const index_type* restrict agg,
                        __global int* restrict used)
{
    const int i = get_global_id(0);
    if (i < n) used[agg[i]] = 1;
}

// agg[i] = index[agg[i]]
__kernel void relabel(const int n, __global const int* restrict index, __global index_type* restrict agg)
{
    const int i = get_global_id(0);
    if (i < n) agg[i] = index[agg[i]];
}

// agg[i] = coarse_agg[agg[i]]
__kernel void compose(const int n, __global index_type* restrict agg,
                      __global const index_type* restrict coarse_agg)
{
    const int i = get_global_id(0);
    if (i < n) agg[i] = coarse_agg[agg[i]];
}

// counts[agg[i]] += 1 (counts cleared before)
__kernel void count_rows(const int n, __global const index_type* restrict agg,
                         __global int* restrict counts)
{
    const int i = get_global_id(0);
    if (i < n) atomic_inc(&counts[agg[i]]);
}

// rows[next[agg[i]]++] = i: each aggregate's rows, in the order the atomics give
__kernel void fill_rows(const int n, __global const index_type* restrict agg,
                        __global int* restrict next, __global index_type* restrict rows)
{
    const int i = get_global_id(0);
    if (i < n) rows[atomic_inc(&next[agg[i]])] = i;
}

// Each aggregate's rows sorted ascending (insertion sort); aggregates of more than `limit`
// rows are left to the host and flagged in too_large.
__kernel void sort_rows(const int m, const int limit, __global const index_type* restrict ptrs,
                        __global index_type* restrict rows, __global int* restrict too_large)
{
    const int agg = get_global_id(0);
    if (agg >= m) return;
    const int begin = ptrs[agg], end = ptrs[agg + 1];
    if (end - begin > limit) {
        *too_large = 1;
        return;
    }
    for (int p = begin + 1; p < end; p++) {
        const int v = rows[p];
        int q = p - 1;
        while (q >= begin && rows[q] > v) {
            rows[q + 1] = rows[q];
            q--;
        }
        rows[q + 1] = v;
    }
}

// -- the Galerkin product, in two steps: B = A P per fine row, then P^T B per aggregate --------
// Both walk the distinct coarse columns J of a row in ascending order by repeated minimum (no
// private arrays, so any row length works) and sum, for each J, its entries in the order stored.

// The distinct aggregates of the columns of each row of A: b_ptrs[row] = their count.
__kernel void count_b(const int n, __global const index_type* restrict row_ptrs,
                      __global const index_type* restrict col_idxs,
                      __global const index_type* restrict agg, __global int* restrict b_ptrs)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    int count = 0, last = -1;
    while (true) {
        int next = INT_MAX;
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            const int J = agg[col_idxs[e]];
            if (J > last && J < next) next = J;
        }
        if (next == INT_MAX) break;
        count++;
        last = next;
    }
    b_ptrs[row] = count;
}

// b_iJ = sum of a_ij over the columns j of row i in aggregate J, J ascending.
__kernel void fill_b(const int n, __global const index_type* restrict row_ptrs,
                     __global const index_type* restrict col_idxs,
                     __global const value_type* restrict values,
                     __global const index_type* restrict agg, __global const int* restrict b_ptrs,
                     __global index_type* restrict b_cols, __global value_type* restrict b_vals)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    int out = b_ptrs[row], last = -1;
    while (true) {
        int next = INT_MAX;
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            const int J = agg[col_idxs[e]];
            if (J > last && J < next) next = J;
        }
        if (next == INT_MAX) break;
        value_type sum = 0;
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            if (agg[col_idxs[e]] == next) sum += values[e];
        }
        b_cols[out] = next;
        b_vals[out] = sum;
        out++;
        last = next;
    }
}

// The distinct columns of the rows of B of each aggregate: ptrs[I] = their count.
__kernel void count_coarse(const int m, __global const int* restrict agg_ptrs,
                           __global const index_type* restrict agg_rows,
                           __global const int* restrict b_ptrs,
                           __global const index_type* restrict b_cols, __global int* restrict ptrs)
{
    const int I = get_global_id(0);
    if (I >= m) return;
    int count = 0, last = -1;
    while (true) {
        int next = INT_MAX;
        for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
            const int i = agg_rows[p];
            for (int e = b_ptrs[i]; e < b_ptrs[i + 1]; e++) {
                const int J = b_cols[e];
                if (J > last && J < next) next = J;
            }
        }
        if (next == INT_MAX) break;
        count++;
        last = next;
    }
    ptrs[I] = count;
}

// c_IJ = sum of b_iJ over the rows i of aggregate I (ascending), J ascending.
__kernel void fill_coarse(const int m, __global const int* restrict agg_ptrs,
                          __global const index_type* restrict agg_rows,
                          __global const int* restrict b_ptrs,
                          __global const index_type* restrict b_cols,
                          __global const value_type* restrict b_vals,
                          __global const int* restrict ptrs, __global index_type* restrict cols,
                          __global value_type* restrict vals)
{
    const int I = get_global_id(0);
    if (I >= m) return;
    int out = ptrs[I], last = -1;
    while (true) {
        int next = INT_MAX;
        for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
            const int i = agg_rows[p];
            for (int e = b_ptrs[i]; e < b_ptrs[i + 1]; e++) {
                const int J = b_cols[e];
                if (J > last && J < next) next = J;
            }
        }
        if (next == INT_MAX) break;
        value_type sum = 0;
        for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
            const int i = agg_rows[p];
            for (int e = b_ptrs[i]; e < b_ptrs[i + 1]; e++) {
                if (b_cols[e] == next) sum += b_vals[e];
            }
        }
        cols[out] = next;
        vals[out] = sum;
        out++;
        last = next;
    }
}

// -- exclusive prefix sum of v[0, size), in chunks of `chunk` entries, one work-item each -----

__kernel void chunk_sums(const int size, const int chunk, __global const int* restrict v,
                         __global int* restrict partial)
{
    const int g = get_global_id(0);
    const int begin = g * chunk;
    if (begin >= size) return;
    const int end = min(size, begin + chunk);
    int sum = 0;
    for (int i = begin; i < end; i++) sum += v[i];
    partial[g] = sum;
}

// partial = its exclusive prefix sum (one work-item)
__kernel void scan_partials(const int count, __global int* restrict partial)
{
    if (get_global_id(0) != 0) return;
    int sum = 0;
    for (int g = 0; g < count; g++) {
        const int v = partial[g];
        partial[g] = sum;
        sum += v;
    }
}

__kernel void chunk_scan(const int size, const int chunk, __global int* restrict v,
                         __global const int* restrict partial)
{
    const int g = get_global_id(0);
    const int begin = g * chunk;
    if (begin >= size) return;
    const int end = min(size, begin + chunk);
    int sum = partial[g];
    for (int i = begin; i < end; i++) {
        const int x = v[i];
        v[i] = sum;
        sum += x;
    }
}
