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
inline int stronger(const real_type w, const uint h, const int col, const real_type best_w,
                    const uint best_h, const int best_col)
{
    return w > best_w || (w == best_w && (h > best_h || (h == best_h && col > best_col)));
}

// a / b correctly rounded: in double where the device has it (OpenCL allows a float division
// 2.5 ulp off), so that weights, and the aggregates chosen from them, match on every device.
#if defined(cl_khr_fp64)
#define DIVIDE(a, b) ((real_type)((double)(a) / (double)(b)))
#else
#define DIVIDE(a, b) ((a) / (b))
#endif

// weights[e] of entry e = (row, col): (|a_rc| + |a_cr|) / 2 / max(|a_rr|, |a_cc|) (real, also
// for complex values), 0 on the diagonal; a_cr found by binary search in row col (0 where it is not stored, which sets
// *nonsymmetric).
__kernel void compute_weights(const int n, __global const index_type* restrict row_ptrs,
                              __global const index_type* restrict col_idxs,
                              __global const value_type* restrict values,
                              __global const value_type* restrict diag,
                              __global real_type* restrict weights, __global int* restrict nonsymmetric)
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
        const real_type sym = (abs_value(values[e]) + abs_value(transposed)) * (real_type)0.5;
        real_type d = fmax(abs_value(diag[row]), abs_value(diag[col]));
        if (d == 0) d = 1;
        weights[e] = DIVIDE(sym, d);
    }
}

// Per unaggregated row: its strongest unaggregated neighbour, else -2 - its strongest
// aggregated one, else itself.
__kernel void find_strongest_neighbor(const int n, __global const index_type* restrict row_ptrs,
                                      __global const index_type* restrict col_idxs,
                                      __global const real_type* restrict weights,
                                      __global const index_type* restrict agg,
                                      __global index_type* restrict strongest_neighbor)
{
    const int row = get_global_id(0);
    if (row >= n || agg[row] != UNAGG) return;
    real_type free_w = 0, taken_w = 0;
    uint free_h = 0, taken_h = 0;
    int free_col = -1, taken_col = -1;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const real_type w = weights[e];
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

// partial[g] = the unaggregated rows of block g (`block` rows from g * block), summed by the
// work-items of group g in strides (coalesced on a GPU)
__kernel void count_unagg(const int n, const int block, __global const index_type* restrict agg,
                          __global int* restrict partial, __local int* tmp)
{
    const int begin = get_group_id(0) * block;
    const int end = min(n, begin + block);
    int count = 0;
    for (int i = begin + get_local_id(0); i < end; i += get_local_size(0)) count += agg[i] == UNAGG;
    count = local_sum_int(tmp, count, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = count;
}

// Rows still unaggregated join their strongest aggregated neighbour's aggregate, or form their
// own. out is another array (deterministic) or, with in_place, agg itself (a row may then see
// a neighbour assigned in this launch).
__kernel void assign_to_exist_agg(const int n, __global const index_type* restrict row_ptrs,
                                  __global const index_type* restrict col_idxs,
                                  __global const real_type* restrict weights,
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
    real_type best_w = 0;
    uint best_h = 0;
    int best_col = -1;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const real_type w = weights[e];
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
// A row's entries are gathered by coarse column J into a private list of up to DISTINCT_MAX
// columns (found by linear search, sums in the order stored), which is then sorted by J. A row
// with more distinct columns walks them instead in ascending order by repeated minimum, one
// scan of the row per column, which needs no storage (any row length works). Rows are written
// to slots as long as they can get (B: the row of A; P^T B: the rows of B of the aggregate),
// then packed.
#define DISTINCT_MAX 32

// Sorts the first `count` entries of (cols, vals) by column (insertion sort).
inline void sort_list(int* cols, value_type* vals, const int count)
{
    for (int p = 1; p < count; p++) {
        const int c = cols[p];
        const value_type v = vals[p];
        int q = p - 1;
        while (q >= 0 && cols[q] > c) {
            cols[q + 1] = cols[q];
            vals[q + 1] = vals[q];
            q--;
        }
        cols[q + 1] = c;
        vals[q + 1] = v;
    }
}

// Adds (J, v) to the list of `*count` distinct columns; false where it is full.
inline bool add_to_list(int* cols, value_type* vals, int* count, const int J, const value_type v)
{
    for (int q = 0; q < *count; q++) {
        if (cols[q] == J) {
            vals[q] += v;
            return true;
        }
    }
    if (*count == DISTINCT_MAX) return false;
    cols[*count] = J;
    vals[*count] = v;
    (*count)++;
    return true;
}

// B = A P: row i in b_cols/b_vals[row_ptrs[i], row_ptrs[i] + b_len[i]), J ascending, b_iJ the
// sum of a_ij over the columns j in aggregate J.
__kernel void fill_b(const int n, __global const index_type* restrict row_ptrs,
                     __global const index_type* restrict col_idxs,
                     __global const value_type* restrict values,
                     __global const index_type* restrict agg, __global int* restrict b_len,
                     __global index_type* restrict b_cols, __global value_type* restrict b_vals)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    const int begin = row_ptrs[row], end = row_ptrs[row + 1];
    int cols[DISTINCT_MAX];
    value_type vals[DISTINCT_MAX];
    int count = 0;
    bool fits = true;
    for (int e = begin; e < end && fits; e++) fits = add_to_list(cols, vals, &count, agg[col_idxs[e]], values[e]);
    if (fits) {
        sort_list(cols, vals, count);
        for (int q = 0; q < count; q++) {
            b_cols[begin + q] = cols[q];
            b_vals[begin + q] = vals[q];
        }
        b_len[row] = count;
        return;
    }
    int out = begin, current = -1;
    while (true) {
        int next = INT_MAX;
        value_type sum = 0;
        for (int e = begin; e < end; e++) {
            const int J = agg[col_idxs[e]];
            if (J == current) sum += values[e];
            if (J > current && J < next) next = J;
        }
        if (current >= 0) {
            b_cols[out] = current;
            b_vals[out] = sum;
            out++;
        }
        if (next == INT_MAX) break;
        current = next;
    }
    b_len[row] = out - begin;
}

// bounds[I] = the entries of the rows of B of aggregate I
__kernel void coarse_bounds(const int m, __global const int* restrict agg_ptrs,
                            __global const index_type* restrict agg_rows,
                            __global const int* restrict b_len, __global int* restrict bounds)
{
    const int I = get_global_id(0);
    if (I >= m) return;
    int count = 0;
    for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) count += b_len[agg_rows[p]];
    bounds[I] = count;
}

// P^T B: row I in the slots from slots[I], c_len[I] entries, J ascending, c_IJ the sum of b_iJ
// over the rows i of aggregate I in agg_rows order.
__kernel void fill_coarse(const int m, __global const int* restrict agg_ptrs,
                          __global const index_type* restrict agg_rows,
                          __global const index_type* restrict row_ptrs,
                          __global const int* restrict b_len,
                          __global const index_type* restrict b_cols,
                          __global const value_type* restrict b_vals,
                          __global const int* restrict slots, __global int* restrict c_len,
                          __global index_type* restrict slot_cols,
                          __global value_type* restrict slot_vals)
{
    const int I = get_global_id(0);
    if (I >= m) return;
    int cols[DISTINCT_MAX];
    value_type vals[DISTINCT_MAX];
    int count = 0;
    bool fits = true;
    for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1] && fits; p++) {
        const int i = agg_rows[p];
        for (int e = row_ptrs[i]; e < row_ptrs[i] + b_len[i] && fits; e++) {
            fits = add_to_list(cols, vals, &count, b_cols[e], b_vals[e]);
        }
    }
    if (fits) {
        sort_list(cols, vals, count);
        for (int q = 0; q < count; q++) {
            slot_cols[slots[I] + q] = cols[q];
            slot_vals[slots[I] + q] = vals[q];
        }
        c_len[I] = count;
        return;
    }
    int out = slots[I], current = -1;
    while (true) {
        int next = INT_MAX;
        value_type sum = 0;
        for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
            const int i = agg_rows[p];
            const int begin = row_ptrs[i], end = begin + b_len[i];
            for (int e = begin; e < end; e++) {
                const int J = b_cols[e];
                if (J == current) sum += b_vals[e];
                if (J > current && J < next) next = J;
            }
        }
        if (current >= 0) {
            slot_cols[out] = current;
            slot_vals[out] = sum;
            out++;
        }
        if (next == INT_MAX) break;
        current = next;
    }
    c_len[I] = out - slots[I];
}

// the rows of the slots packed: cols/vals[ptrs[I], ptrs[I + 1]) from the slots of row I
__kernel void pack(const int m, __global const int* restrict slots, __global const int* restrict ptrs,
                   __global const index_type* restrict slot_cols,
                   __global const value_type* restrict slot_vals, __global index_type* restrict cols,
                   __global value_type* restrict vals)
{
    const int I = get_global_id(0);
    if (I >= m) return;
    const int from = slots[I];
    for (int p = ptrs[I]; p < ptrs[I + 1]; p++) {
        cols[p] = slot_cols[from + p - ptrs[I]];
        vals[p] = slot_vals[from + p - ptrs[I]];
    }
}

// -- exclusive prefix sum of v[0, size): chunk sums, their prefix sum, each chunk scanned ------

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

// v[0, size) = its exclusive prefix sum, by one work-group: loaded to local memory, summed
// there by one work-item, written back (size <= the local buffer)
__kernel void scan_small(const int size, __global int* restrict v, __local int* tmp)
{
    const int lid = get_local_id(0), width = get_local_size(0);
    for (int i = lid; i < size; i += width) tmp[i] = v[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int sum = 0;
        for (int i = 0; i < size; i++) {
            const int x = tmp[i];
            tmp[i] = sum;
            sum += x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < size; i += width) v[i] = tmp[i];
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
