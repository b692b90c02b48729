// Kernels of Pgm (parallel graph match aggregation) and its Galerkin product; see
// reference/multigrid/pgm_kernels.py for what each computes. One work-item per row (or
// aggregate, or chunk of a scan). Every kernel but the in-place assign_to_exist_agg and the
// atomic fills (whose order sort_rows restores afterwards) gives the same result on every
// device: ties are broken by a hash of the edge, coarse entries summed in a fixed order. The
// number of aggregates m stays on the device (sizes[0]): kernels over aggregates are launched
// over the rows and skip the work-items from m on.
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

// The strongest of a row's candidate neighbours: the largest weight, then the larger edge hash,
// then the larger column. The hashes are computed only between equal weights (ties: every
// neighbour of a row of a uniform grid), the best's kept once known.
typedef struct {
    real_type w;
    int col;  // -1: none yet
    uint h;
    int has_h;
} choice;

inline choice no_choice(void)
{
    choice c = {0, -1, 0, 0};
    return c;
}

inline void consider(choice* best, const real_type w, const int col, const int row)
{
    if (best->col >= 0 && w < best->w) return;
    if (best->col < 0 || w > best->w) {
        best->w = w;
        best->col = col;
        best->has_h = 0;
        return;
    }
    const uint h = edge_hash(row, col);
    if (!best->has_h) {
        best->h = edge_hash(row, best->col);
        best->has_h = 1;
    }
    if (h > best->h || (h == best->h && col > best->col)) {
        best->col = col;
        best->h = h;
    }
}

// 1 / x correctly rounded: in double where the device has it (OpenCL allows a float division
// 2.5 ulp off), so that weights, and the aggregates chosen from them, match on every device.
#if defined(cl_khr_fp64)
#define RECIPROCAL(x) ((real_type)(1.0 / (double)(x)))
#else
#define RECIPROCAL(x) ((real_type)1 / (x))
#endif

// |a| and the smaller of two reals without the math library's fabs and fmin, which a CPU device
// (PoCL) calls as functions, at 2-3x these kernels' time (no NaN reaches them)
#if VALUE_COMPLEX
#define magnitude(a) abs_value(a)
#else
#define magnitude(a) ((a) < 0 ? -(a) : (a))
#endif

// The arrays a pass starts from: agg all -1 (no row aggregated), the matching state
// [threshold, n, 0 for each sweep], the flags [0, 0]
__kernel void start_pass(const int items, const int chunk, const int n, const int threshold, const int sweeps,
                         __global index_type* restrict agg, __global int* restrict state,
                         __global int* restrict flags)
{
    FOR_ITEMS(i, items) {
        if (i < n) agg[i] = UNAGG;
        if (i < 2 + sweeps) state[i] = i == 0 ? threshold : i == 1 ? n : 0;
        if (i < 2) flags[i] = 0;
    }
}

// scale[i] = 1 / |a_ii| (infinity where a_ii is zero or not stored)
__kernel void diagonal_scale(const int n, const int chunk, __global const index_type* restrict row_ptrs,
                             __global const index_type* restrict col_idxs,
                             __global const value_type* restrict values, __global real_type* restrict scale)
{
    FOR_ITEMS(row, n) {
        real_type d = 0;
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            if (col_idxs[e] == row) d = magnitude(values[e]);
        }
        scale[row] = d == 0 ? INFINITY : RECIPROCAL(d);
    }
}

// weights[e] of entry e = (row, col): (|a_rc| + |a_cr|) / 2 times min(scale[row], scale[col])
// (that is, over max(|a_rr|, |a_cc|); times 1 where both are 0), real also for complex values,
// 0 on the diagonal; a_cr found by a binary search in row col without branches (0 where it is
// not stored, which sets flags[0]: the pattern is not symmetric). With the weights, the first
// matching sweep's choice: strongest_neighbor[row] = the strongest neighbour (entries of
// positive weight), or the row itself where it has none.
__kernel void compute_weights(const int n, const int chunk, __global const index_type* restrict row_ptrs,
                              __global const index_type* restrict col_idxs,
                              __global const value_type* restrict values,
                              __global const real_type* restrict scale,
                              __global real_type* restrict weights, __global int* restrict flags,
                              __global index_type* restrict strongest_neighbor)
{
    FOR_ITEMS(row, n) {
        const real_type own = scale[row];
        choice best = no_choice();
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            const int col = col_idxs[e];
            // the last entry of row col with a column <= row
            int base = row_ptrs[col], len = row_ptrs[col + 1] - base;
            while (len > 1) {
                const int step = len / 2;
                base = col_idxs[base + step] <= row ? base + step : base;
                len -= step;
            }
            const bool found = len == 1 && col_idxs[base] == row;
            if (!found) flags[0] = 1;
            const value_type transposed = found ? values[base] : (value_type)0;
            const real_type sym = (magnitude(values[e]) + magnitude(transposed)) * (real_type)0.5;
            const real_type other = scale[col];
            const real_type m = own < other ? own : other;
            const real_type w = col == row ? 0 : sym * (m == INFINITY ? (real_type)1 : m);
            weights[e] = w;
            if (w > 0) consider(&best, w, col, row);
        }
        strongest_neighbor[row] = best.col >= 0 ? best.col : row;
    }
}

// Whether the matching stopped before sweep `sweep` (core/multigrid/pgm.py: matching_stopped):
// state = [threshold, n, rows aggregated by sweep 0, by sweep 1, ...], complete for the sweeps
// before (their kernels have finished).
inline bool matching_stopped(__global const int* state, const int sweep)
{
    if (sweep == 0) return false;
    int before = state[1];
    for (int s = 0; s < sweep - 1; s++) before -= state[2 + s];
    const int left = before - state[1 + sweep];
    return left == 0 || left == before || left < state[0];
}

// Per unaggregated row: its strongest unaggregated neighbour, else -2 - its strongest
// aggregated one, else itself (nothing once the matching stopped).
__kernel void find_strongest_neighbor(const int n, const int chunk, const int sweep,
                                      __global const int* restrict state,
                                      __global const index_type* restrict row_ptrs,
                                      __global const index_type* restrict col_idxs,
                                      __global const real_type* restrict weights,
                                      __global const index_type* restrict agg,
                                      __global index_type* restrict strongest_neighbor)
{
    if (matching_stopped(state, sweep)) return;
    FOR_ITEMS(row, n) {
        if (agg[row] != UNAGG) continue;
        choice free = no_choice(), taken = no_choice();
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            const real_type w = weights[e];
            if (!(w > 0)) continue;
            const int col = col_idxs[e];
            if (agg[col] == UNAGG) consider(&free, w, col, row);
            else consider(&taken, w, col, row);
        }
        strongest_neighbor[row] = free.col >= 0 ? free.col : taken.col >= 0 ? -2 - taken.col : row;
    }
}

// Rows that chose each other form the aggregate named by the smaller; a row whose neighbours are
// all aggregated joins its strongest one's aggregate (fixed before this launch). A row written
// here by its partner reads either value of agg[i] and then writes nothing. The rows aggregated
// are summed per work-group and added to state[2 + sweep] (nothing once the matching stopped).
__kernel void match_edge(const int n, const int chunk, const int sweep, __global int* restrict state,
                         __global const index_type* restrict strongest_neighbor,
                         __global index_type* agg, __local int* tmp)
{
    int count = 0;
    if (!matching_stopped(state, sweep)) {
        FOR_ITEMS(i, n) {
            if (agg[i] != UNAGG) continue;
            const int s = strongest_neighbor[i];
            if (s <= -2) {
                agg[i] = agg[-2 - s];
                count += 1;
            } else if (s >= 0 && strongest_neighbor[s] == i && i <= s) {
                agg[i] = i;
                agg[s] = i;
                count += i == s ? 1 : 2;
            }
        }
    }
    count = local_sum_int(tmp, count, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0 && count > 0) atomic_add(&state[2 + sweep], count);
}

// Rows still unaggregated join their strongest aggregated neighbour's aggregate, or form their
// own. out is another array (deterministic) or, with in_place, agg itself (a row may then see
// a neighbour assigned in this launch).
__kernel void assign_to_exist_agg(const int n, const int chunk, __global const index_type* restrict row_ptrs,
                                  __global const index_type* restrict col_idxs,
                                  __global const real_type* restrict weights,
                                  __global const index_type* agg, __global index_type* out,
                                  const int in_place)
{
    FOR_ITEMS(row, n) {
        const int own = agg[row];
        if (own != UNAGG) {
            if (!in_place) out[row] = own;
            continue;
        }
        choice best = no_choice();
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            const real_type w = weights[e];
            const int col = col_idxs[e];
            if (w > 0 && agg[col] != UNAGG) consider(&best, w, col, row);
        }
        out[row] = best.col >= 0 ? agg[best.col] : row;
    }
}

// -- the aggregates numbered and their rows -------------------------------------------------------
// counts[4 r + (0, 1, 2, 3)] of a root r (an aggregate's name, one of its rows): (1, its rows,
// their entries in A, their members: members[i + 1] - members[i] for its rows i where
// with_members, else left 0); counts cleared before
__kernel void count_members(const int n, const int chunk, __global const index_type* restrict agg,
                            __global const index_type* restrict row_ptrs,
                            __global const index_type* restrict members, const int with_members,
                            __global int* restrict counts)
{
    FOR_ITEMS(i, n) {
        const int root = agg[i];
        if (root == i) counts[4 * root] = 1;
        atomic_inc(&counts[4 * root + 1]);
        atomic_add(&counts[4 * root + 2], row_ptrs[i + 1] - row_ptrs[i]);
        if (with_members) atomic_add(&counts[4 * root + 3], members[i + 1] - members[i]);
    }
}

// With counts scanned (exclusive, over the roots r = 0..n): agg[i] = the aggregate's number
// (counts[4 r]); its rows placed from agg_ptrs (atomic_inc on next = counts + 4 (n + 1), cleared
// before: in any order); the root writes the aggregate's pointers (rows, entries of A: bounds,
// members), row 0 also the ends and sizes = (m, entries, members).
__kernel void number_aggregates(const int n, const int chunk, __global index_type* restrict agg,
                                __global int* restrict counts,
                                __global index_type* restrict agg_ptrs, __global index_type* restrict agg_rows,
                                __global int* restrict bounds, __global int* restrict fine_ptrs,
                                __global int* restrict sizes)
{
    __global int* next = counts + 4 * (n + 1);
    FOR_ITEMS(i, n) {
        const int root = agg[i];
        const int I = counts[4 * root];
        agg[i] = I;
        agg_rows[counts[4 * root + 1] + atomic_inc(&next[root])] = i;
        if (root == i) {
            agg_ptrs[I] = counts[4 * root + 1];
            bounds[I] = counts[4 * root + 2];
            fine_ptrs[I] = counts[4 * root + 3];
        }
        if (i == 0) {
            const int m = counts[4 * n];
            agg_ptrs[m] = counts[4 * n + 1];
            bounds[m] = counts[4 * n + 2];
            fine_ptrs[m] = counts[4 * n + 3];
            sizes[0] = m;
            sizes[1] = counts[4 * n + 2];
            sizes[2] = counts[4 * n + 3];
        }
    }
}

// rows[begin, end) ascending (insertion sort); false (nothing done) where they are more than limit
inline bool sort_range(__global index_type* rows, const int begin, const int end, const int limit)
{
    if (end - begin > limit) return false;
    for (int p = begin + 1; p < end; p++) {
        const int v = rows[p];
        int q = p - 1;
        while (q >= begin && rows[q] > v) {
            rows[q + 1] = rows[q];
            q--;
        }
        rows[q + 1] = v;
    }
    return true;
}

// Each aggregate's rows ascending; those of an aggregate of more than `limit` rows are left to
// the host (flags[1] set).
__kernel void sort_rows(const int n, const int chunk, const int limit, __global const int* restrict sizes,
                        __global const index_type* restrict ptrs, __global index_type* restrict rows,
                        __global int* restrict flags)
{
    FOR_ITEMS(I, min(n, sizes[0])) {
        if (!sort_range(rows, ptrs[I], ptrs[I + 1], limit)) flags[1] = 1;
    }
}

// Two passes as one: for each aggregate J of the second pass (its rows, first-pass aggregates
// I, ascending), the fine rows of its I one after another from fine_ptrs[J], sorted, and
// fine[i] = J for each of them (every row once: fine is a new array, the first pass's kept).
__kernel void compose(const int n, const int chunk, const int limit, __global const int* restrict sizes,
                      __global index_type* restrict fine, __global const index_type* restrict agg_ptrs,
                      __global const index_type* restrict agg_rows,
                      __global const index_type* restrict coarse_ptrs,
                      __global const index_type* restrict coarse_rows,
                      __global const index_type* restrict fine_ptrs, __global index_type* restrict rows,
                      __global int* restrict flags)
{
    FOR_ITEMS(J, min(n, sizes[0])) {
        int out = fine_ptrs[J];
        for (int q = coarse_ptrs[J]; q < coarse_ptrs[J + 1]; q++) {
            const int I = coarse_rows[q];
            for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
                const int i = agg_rows[p];
                rows[out++] = i;
                fine[i] = J;
            }
        }
        if (!sort_range(rows, fine_ptrs[J], out, limit)) flags[1] = 1;
    }
}

// -- the Galerkin product P^T A P, one work-item per aggregate I ---------------------------------
// The entries of the rows of I (ascending, each in the order stored) are gathered by coarse
// column J = agg[j] into a private list of up to DISTINCT_MAX columns (found by linear search,
// each sum in that order), which is then sorted by J. An aggregate with more distinct columns
// walks them instead in ascending order by repeated minimum, one pass over its entries per
// column, which needs no storage. Row I is written from bounds[I] (room for all its rows'
// entries) and packed afterwards.
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

// Row I of P^T A P at slot_cols/slot_vals from bounds[I], lens[I] entries (0 for m <= I <= n).
__kernel void galerkin(const int n, const int chunk, __global const int* restrict sizes,
                       __global const index_type* restrict row_ptrs,
                       __global const index_type* restrict col_idxs,
                       __global const value_type* restrict values,
                       __global const index_type* restrict agg,
                       __global const index_type* restrict agg_ptrs,
                       __global const index_type* restrict agg_rows, __global const int* restrict bounds,
                       __global int* restrict lens, __global index_type* restrict slot_cols,
                       __global value_type* restrict slot_vals)
{
    const int m = sizes[0];
    FOR_ITEMS(I, n + 1) {
        if (I >= m) {
            lens[I] = 0;
            continue;
        }
        int cols[DISTINCT_MAX];
        value_type vals[DISTINCT_MAX];
        int count = 0;
        bool fits = true;
        for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1] && fits; p++) {
            const int i = agg_rows[p];
            for (int e = row_ptrs[i]; e < row_ptrs[i + 1] && fits; e++) {
                fits = add_to_list(cols, vals, &count, agg[col_idxs[e]], values[e]);
            }
        }
        const int begin = bounds[I];
        if (fits) {
            sort_list(cols, vals, count);
            for (int q = 0; q < count; q++) {
                slot_cols[begin + q] = cols[q];
                slot_vals[begin + q] = vals[q];
            }
            lens[I] = count;
            continue;
        }
        int out = begin, current = -1;
        while (true) {
            int next = INT_MAX;
            value_type sum = 0;
            for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
                const int i = agg_rows[p];
                for (int e = row_ptrs[i]; e < row_ptrs[i + 1]; e++) {
                    const int J = agg[col_idxs[e]];
                    if (J == current) sum += values[e];
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
        lens[I] = out - begin;
    }
}

// The rows packed: cols/vals[ptrs[I], ptrs[I + 1]) from starts[I], the values times scale
__kernel void pack(const int m, const int chunk, const real_type scale, __global const int* restrict ptrs,
                   __global const int* restrict starts, __global const index_type* restrict slot_cols,
                   __global const value_type* restrict slot_vals, __global index_type* restrict row_ptrs,
                   __global index_type* restrict cols, __global value_type* restrict vals)
{
    FOR_ITEMS(I, m + 1) {
        row_ptrs[I] = ptrs[I];
        if (I == m) continue;
        const int from = starts[I] - ptrs[I];
        for (int p = ptrs[I]; p < ptrs[I + 1]; p++) {
            cols[p] = slot_cols[from + p];
            vals[p] = scale * slot_vals[from + p];
        }
    }
}

// -- exclusive prefix sum of v[0, size) of WIDTH components each (int WIDTH-vectors, stored one
// after another): chunk sums, their prefix sum, each chunk scanned --------------------------------
#ifndef WIDTH
#define WIDTH 1
#endif

__kernel void chunk_sums(const int size, const int chunk, __global const int* restrict v,
                         __global int* restrict partial)
{
    const int g = get_global_id(0);
    const int begin = g * chunk;
    if (begin >= size) return;
    const int end = min(size, begin + chunk);
    for (int w = 0; w < WIDTH; w++) {
        int sum = 0;
        for (int i = begin; i < end; i++) sum += v[i * WIDTH + w];
        partial[g * WIDTH + w] = sum;
    }
}

// v[0, size) = its exclusive prefix sum, by one work-group: loaded to local memory, summed
// there by one work-item, written back (size <= the local buffer)
__kernel void scan_small(const int size, __global int* restrict v, __local int* tmp)
{
    const int lid = get_local_id(0), width = get_local_size(0);
    for (int i = lid; i < size * WIDTH; i += width) tmp[i] = v[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (int w = 0; w < WIDTH; w++) {
            int sum = 0;
            for (int i = 0; i < size; i++) {
                const int x = tmp[i * WIDTH + w];
                tmp[i * WIDTH + w] = sum;
                sum += x;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < size * WIDTH; i += width) v[i] = tmp[i];
}

__kernel void chunk_scan(const int size, const int chunk, __global int* restrict v,
                         __global const int* restrict partial)
{
    const int g = get_global_id(0);
    const int begin = g * chunk;
    if (begin >= size) return;
    const int end = min(size, begin + chunk);
    for (int w = 0; w < WIDTH; w++) {
        int sum = partial[g * WIDTH + w];
        for (int i = begin; i < end; i++) {
            const int x = v[i * WIDTH + w];
            v[i * WIDTH + w] = sum;
            sum += x;
        }
    }
}
