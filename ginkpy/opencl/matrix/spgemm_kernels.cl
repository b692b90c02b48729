// Sparse matrix-matrix product C = A B of Csr matrices (columns sorted in every row) and the
// transpose with the map of its entries. Row i of C is a k-way merge of the sorted rows B_k for
// the entries a_ik of row i of A: a cursor per entry e walks row col_idxs[e] of B, its head the
// column under it. Each output column costs one scan over the row's heads, which advances those
// at that column and finds the next smallest one. Rows of A of at most PRIVATE_LISTS entries:
// one work-item, the lists in private arrays (count_rows, fill_rows); longer rows: a work-group,
// the lists in global scratch of nnz(A) (merge_long_rows). A CPU (and a GPU where C has few
// columns) accumulates densely instead (count_rows_dense, fill_rows_dense). Column j of C sums
// a_ik b_kj over the entries of row i of A in their stored order (a long row's, merged by a
// work-group: in a tree over its work-items). Where the scratch is small enough the rows are
// written once at an upper bound of their lengths and compacted (bound_rows, compact_rows)
// instead of counted first.
#include "common.cl"

#define NONE INT_MAX

// (the transpose's program is built without the product's defines)
#ifndef PRIVATE_LISTS
#define PRIVATE_LISTS 1
#endif
#ifndef WRITE_COLS
#define WRITE_COLS 0
#endif
#ifndef COUNT_ONLY
#define COUNT_ONLY 0
#endif
#ifndef LIST_LONG
#define LIST_LONG 0
#endif
#ifndef COUNT_ROWS
#define COUNT_ROWS 0
#endif
#ifndef HASH_LIMIT
#define HASH_LIMIT 0
#endif
#ifndef HASH_FROM
#define HASH_FROM 0
#endif

// The products a_ik b_kj of row i of A B (a bound on the length of row i of C), counted up to
// just past limit
inline int product_bound(const int i, const int limit, __global const int* restrict a_ptrs,
                         __global const int* restrict a_cols, __global const int* restrict b_ptrs)
{
    int bound = 0;
    for (int e = a_ptrs[i]; e < a_ptrs[i + 1] && bound <= limit; ++e) {
        bound += b_ptrs[a_cols[e] + 1] - b_ptrs[a_cols[e]];
    }
    return bound;
}

// Whether a row of that many products is the hash's (count_rows_hash, fill_rows_hash): more than
// HASH_FROM (fewer merge faster in one work-item) and at most HASH_LIMIT; else the merge's
#define HASH_TAKES(bound) ((bound) > HASH_FROM && (bound) <= HASH_LIMIT)
#if HASH_LIMIT > 0
#define HASHED(i) HASH_TAKES(product_bound(i, HASH_LIMIT, a_ptrs, a_cols, b_ptrs))
#else
#define HASHED(i) 0
#endif

// The lists of a row of A of at most PRIVATE_LISTS entries live in private arrays (a GPU keeps
// them interleaved across work-items, coalesced); longer rows are merge_long_rows's
#define LISTS int cursor_[PRIVATE_LISTS], head_[PRIVATE_LISTS];
#define CURSOR(e) cursor_[(e) - begin]
#define HEAD(e) head_[(e) - begin]
#define TAKES(length) ((length) <= PRIVATE_LISTS)

// CURSOR(e) = the start of row a_cols[e] of B, HEAD(e) its column there (NONE: the row is
// empty); next = the smallest of the heads
#define START_MERGE(next)                                              \
    next = NONE;                                                       \
    for (int e = begin; e < end; ++e) {                                \
        const int k = a_cols[e];                                       \
        const int p = b_ptrs[k];                                       \
        const int col = p < b_ptrs[k + 1] ? b_cols[p] : NONE;          \
        CURSOR(e) = p;                                                 \
        HEAD(e) = col;                                                 \
        next = min(next, col);                                         \
    }

// The list of entry e past its head: h = its next column, NONE at the end of row a_cols[e] of B
#define ADVANCE(e, h)                                                  \
    {                                                                  \
        const int p = CURSOR(e) + 1;                                   \
        h = p < b_ptrs[a_cols[e] + 1] ? b_cols[p] : NONE;              \
        CURSOR(e) = p;                                                 \
        HEAD(e) = h;                                                   \
    }

// The rows this variant does not take and the hash does not either (merge_long_rows's): listed
// in long_rows[1 + r] for r below long_rows[0] (zeroed: the count; any order)
#define LIST_IF_LONG(i, length)                                                  \
    if (!TAKES(length) && !HASHED(i)) long_rows[1 + atomic_inc(long_rows)] = (i);

// counts[i] = the number of distinct columns of row i of C for the rows this variant takes
// (TAKES), for the items = n + 1 rows of the row pointers (counts[n] = 0: the prefix sum's
// total); the long rows listed
__kernel void count_rows(const int items, const int chunk, __global const int* restrict a_ptrs,
                         __global const int* restrict a_cols, __global const int* restrict b_ptrs,
                         __global const int* restrict b_cols, __global int* restrict counts,
                         volatile __global int* restrict long_rows)
{
    const int n = items - 1;
    FOR_ITEMS(i, items) {
        if (i == n) {
            counts[n] = 0;
            continue;
        }
        const int begin = a_ptrs[i], end = a_ptrs[i + 1];
        LIST_IF_LONG(i, end - begin)
        if (!TAKES(end - begin) || HASHED(i)) continue;
        LISTS
        int next;
        START_MERGE(next)
        int count = 0;
        while (next != NONE) {
            const int col = next;
            next = NONE;
            for (int e = begin; e < end; ++e) {
                int h = HEAD(e);
                if (h == col) ADVANCE(e, h)
                next = min(next, h);
            }
            ++count;
        }
        counts[i] = count;
    }
}

// Row i of C at c_ptrs[i] (the rows this variant takes): its columns ascending (WRITE_COLS;
// else only the values, on the pattern an earlier product wrote) and c_ij = sum_k a_ik b_kj;
// with LIST_LONG the long rows listed (as count_rows does)
__kernel void fill_rows(const int n, const int chunk, __global const int* restrict a_ptrs,
                        __global const int* restrict a_cols, __global const value_type* restrict a_vals,
                        __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                        __global const value_type* restrict b_vals, __global const int* restrict c_ptrs,
                        __global int* restrict c_cols, __global value_type* restrict c_vals,
                        volatile __global int* restrict long_rows, __global int* restrict counts)
{
    FOR_ITEMS(i, n) {
        const int begin = a_ptrs[i], end = a_ptrs[i + 1];
#if LIST_LONG
        LIST_IF_LONG(i, end - begin)
#endif
        if (!TAKES(end - begin) || HASHED(i)) continue;
        LISTS
        int next;
        START_MERGE(next)
        int out = c_ptrs[i];
        while (next != NONE) {
            const int col = next;
            value_type sum = 0;
            next = NONE;
            for (int e = begin; e < end; ++e) {
                int h = HEAD(e);
                if (h == col) {
                    sum += mul(a_vals[e], b_vals[CURSOR(e)]);  // a_ik b_kj
                    ADVANCE(e, h)
                }
                next = min(next, h);
            }
#if WRITE_COLS
            c_cols[out] = col;
#endif
            c_vals[out] = sum;
            ++out;
        }
#if COUNT_ROWS
        counts[i] = out - c_ptrs[i];
#endif
    }
}

// -- long rows: a work-group per row -------------------------------------------------------
// A row of A of more than PRIVATE_LISTS entries (listed by count_rows or fill_rows in long_rows:
// only those are visited, not every row) is merged by a work-group: each work-item keeps the
// lists of every lanes-th entry (cursor and head: global, nnz(A) each, the halves of state),
// the smallest head and the products at it are reduced over the group (a tree in local memory:
// a fixed order for a work-group size). COUNT_ONLY: counts[i] only (counts[n] = 0 by the short
// rows' launch); else columns (WRITE_COLS) and values at c_ptrs[i].

inline int local_min_int(__local int* slot, const int v, const int index, const int count)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    slot[index] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = count / 2; s > 0; s /= 2) {
        if (index < s) slot[index] = min(slot[index], slot[index + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return slot[0];
}

__kernel void merge_long_rows(__global const int* restrict long_rows, __global const int* restrict a_ptrs,
                              __global const int* restrict a_cols, __global const value_type* restrict a_vals,
                              __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                              __global const value_type* restrict b_vals, const int offset,
                              __global int* restrict state, __global int* restrict counts,
                              __global const int* restrict c_ptrs, __global int* restrict c_cols,
                              __global value_type* restrict c_vals, __local int* mins, __local value_type* sums)
{
    const int lid = get_local_id(0), lanes = get_local_size(0);
    __global int* restrict cursor = state;
    __global int* restrict head = state + offset;
    for (int r = get_group_id(0); r < long_rows[0]; r += get_num_groups(0)) {
        const int i = long_rows[1 + r];
        const int begin = a_ptrs[i], end = a_ptrs[i + 1];
        int own = NONE;
        for (int e = begin + lid; e < end; e += lanes) {
            const int k = a_cols[e];
            const int p = b_ptrs[k];
            const int col = p < b_ptrs[k + 1] ? b_cols[p] : NONE;
            cursor[e] = p;
            head[e] = col;
            own = min(own, col);
        }
        int next = local_min_int(mins, own, lid, lanes);
        int out = c_ptrs[i];
        int count = 0;
        while (next != NONE) {
            const int col = next;
            value_type part = 0;
            own = NONE;
            for (int e = begin + lid; e < end; e += lanes) {
                int h = head[e];
                if (h == col) {
#if !COUNT_ONLY
                    part += mul(a_vals[e], b_vals[cursor[e]]);  // a_ik b_kj
#endif
                    const int p = cursor[e] + 1;
                    h = p < b_ptrs[a_cols[e] + 1] ? b_cols[p] : NONE;
                    cursor[e] = p;
                    head[e] = h;
                }
                own = min(own, h);
            }
#if !COUNT_ONLY
            barrier(CLK_LOCAL_MEM_FENCE);
            const value_type sum = local_sum(sums, part, lid, lanes, 1);
            if (lid == 0) {
#if WRITE_COLS
                c_cols[out] = col;
#endif
                c_vals[out] = sum;
            }
#endif
            ++out;
            ++count;
            next = local_min_int(mins, own, lid, lanes);
        }
#if COUNT_ONLY || COUNT_ROWS
        if (lid == 0) counts[i] = count;
#endif
    }
}

// -- a GPU's hash: a work-group per row -----------------------------------------------------
// A row whose products number more than HASH_FROM and at most HASH_LIMIT (product_bound, the
// rows that a work-item's merge would take long for and local memory holds): its distinct columns are
// gathered in a hash table in the work-group's local memory (open addressing, the power of two
// of at least twice the products' slots, a column inserted with atomic_cmpxchg and listed once),
// each column's place in the row is its rank among them, and its value c_ij = sum_k a_ik b_kj
// is summed by one work-item in the order of A's entries (b_kj found by bisection in row k of
// B): the merge's order, so that the hash and the merge give the same values. Rows not taken run
// the loops zero times (every barrier reached by the whole group).

// The distinct columns of the products of A's entries [begin, end) in list[0, count) (any
// order); returns count, the same in every work-item
inline int hash_columns(const int begin, const int end, const int bound, __global const int* restrict a_cols,
                        __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                        __local int* table, __local int* list, __local int* count)
{
    const int lid = get_local_id(0), lanes = get_local_size(0);
    int size = 2;
    while (size < 2 * bound) size *= 2;
    for (int s = lid; s < size; s += lanes) table[s] = -1;
    if (lid == 0) *count = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = begin; e < end; ++e) {
        const int k = a_cols[e];
        for (int p = b_ptrs[k] + lid; p < b_ptrs[k + 1]; p += lanes) {
            const int col = b_cols[p];
            int h = (int)(((uint)col * 2654435761u) & (uint)(size - 1));
            int old = atomic_cmpxchg(table + h, -1, col);
            while (old != -1 && old != col) {
                h = (h + 1) & (size - 1);
                old = atomic_cmpxchg(table + h, -1, col);
            }
            if (old == -1) list[atomic_inc(count)] = col;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return *count;
}

// c_ij = sum over A's entries e in [begin, end) of a_ie b_(a_cols[e]) j, in their order
inline value_type product_at(const int begin, const int end, const int col, __global const int* restrict a_cols,
                             __global const value_type* restrict a_vals, __global const int* restrict b_ptrs,
                             __global const int* restrict b_cols, __global const value_type* restrict b_vals)
{
    value_type sum = 0;
    for (int e = begin; e < end; ++e) {
        const int k = a_cols[e];
        int lo = b_ptrs[k], hi = b_ptrs[k + 1];
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (b_cols[mid] < col) lo = mid + 1; else hi = mid;
        }
        if (lo < b_ptrs[k + 1] && b_cols[lo] == col) sum += mul(a_vals[e], b_vals[lo]);  // a_ik b_kj
    }
    return sum;
}

// hashed[1 + r] = a row the hash takes, for r below hashed[0] (zeroed: the count; any order)
__kernel void list_hashed_rows(const int n, const int chunk, __global const int* restrict a_ptrs,
                               __global const int* restrict a_cols, __global const int* restrict b_ptrs,
                               volatile __global int* restrict hashed)
{
    FOR_ITEMS(i, n) {
        if (HASHED(i)) hashed[1 + atomic_inc(hashed)] = i;
    }
}

// counts[i] = the number of distinct columns of row i of C, for the rows listed in hashed
__kernel void count_rows_hash(__global const int* restrict hashed, __global const int* restrict a_ptrs,
                              __global const int* restrict a_cols, __global const int* restrict b_ptrs,
                              __global const int* restrict b_cols, __global int* restrict counts,
                              __local int* table, __local int* list, __local int* count)
{
    for (int r = get_group_id(0); r < hashed[0]; r += get_num_groups(0)) {
        const int i = hashed[1 + r];
        const int bound = product_bound(i, HASH_LIMIT, a_ptrs, a_cols, b_ptrs);
        const int c = hash_columns(a_ptrs[i], a_ptrs[i + 1], bound, a_cols, b_ptrs, b_cols, table, list, count);
        if (get_local_id(0) == 0) counts[i] = c;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Row i of C at c_ptrs[i] for the rows listed in hashed: with WRITE_COLS its columns (each at
// its rank) and values; else the values on the columns there
__kernel void fill_rows_hash(__global const int* restrict hashed, __global const int* restrict a_ptrs,
                             __global const int* restrict a_cols, __global const value_type* restrict a_vals,
                             __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                             __global const value_type* restrict b_vals, __global const int* restrict c_ptrs,
                             __global int* restrict c_cols, __global value_type* restrict c_vals,
                             __local int* table, __local int* list, __local int* count)
{
    const int lid = get_local_id(0), lanes = get_local_size(0);
    for (int r = get_group_id(0); r < hashed[0]; r += get_num_groups(0)) {
        const int i = hashed[1 + r];
        const int begin = a_ptrs[i], end = a_ptrs[i + 1], start = c_ptrs[i];
#if WRITE_COLS
        const int bound = product_bound(i, HASH_LIMIT, a_ptrs, a_cols, b_ptrs);
        const int c = hash_columns(begin, end, bound, a_cols, b_ptrs, b_cols, table, list, count);
        for (int s = lid; s < c; s += lanes) {
            const int col = list[s];
            int rank = 0;
            for (int t = 0; t < c; ++t) rank += list[t] < col;
            c_cols[start + rank] = col;
            c_vals[start + rank] = product_at(begin, end, col, a_cols, a_vals, b_ptrs, b_cols, b_vals);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#else
        for (int p = start + lid; p < c_ptrs[i + 1]; p += lanes) {
            c_vals[p] = product_at(begin, end, c_cols[p], a_cols, a_vals, b_ptrs, b_cols, b_vals);
        }
#endif
    }
}

// -- a CPU's dense accumulator (Gustavson) ---------------------------------------------------
// Each work-item has a marker per column of C (marker + t * columns, all -1 at the launch) and
// takes a contiguous stretch of rows: a column's marker holds the last row that met it (count)
// or its place in the row of C being written (fill; places grow with the rows). Column j of C
// sums the products in the order of the entries of A, then of B: the merge's order.

// counts[i] = the number of distinct columns of row i of C (counts[n] = 0)
__kernel void count_rows_dense(const int items, const int chunk, const int columns,
                               __global const int* restrict a_ptrs, __global const int* restrict a_cols,
                               __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                               __global int* restrict markers, __global int* restrict counts)
{
    const int n = items - 1;
    __global int* restrict marker = markers + (size_t)get_global_id(0) * columns;
    FOR_ITEMS(i, items) {
        if (i == n) {
            counts[n] = 0;
            continue;
        }
        int count = 0;
        for (int e = a_ptrs[i]; e < a_ptrs[i + 1]; ++e) {
            const int k = a_cols[e];
            for (int p = b_ptrs[k]; p < b_ptrs[k + 1]; ++p) {
                const int col = b_cols[p];
                if (marker[col] != i) {
                    marker[col] = i;
                    ++count;
                }
            }
        }
        counts[i] = count;
    }
}

// Row i of C at c_ptrs[i]: with WRITE_COLS its columns as first met, then sorted with the
// values (shell sort); else the columns known (sorted), only the values
__kernel void fill_rows_dense(const int n, const int chunk, const int columns, __global const int* restrict a_ptrs,
                              __global const int* restrict a_cols, __global const value_type* restrict a_vals,
                              __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                              __global const value_type* restrict b_vals, __global int* restrict markers,
                              __global const int* restrict c_ptrs, __global int* restrict c_cols,
                              __global value_type* restrict c_vals, __global int* restrict counts)
{
    __global int* restrict marker = markers + (size_t)get_global_id(0) * columns;
    FOR_ITEMS(i, n) {
        const int start = c_ptrs[i];
        int end = start;
#if !WRITE_COLS
        for (end = start; end < c_ptrs[i + 1]; ++end) {
            marker[c_cols[end]] = end;
            c_vals[end] = 0;
        }
#endif
        for (int e = a_ptrs[i]; e < a_ptrs[i + 1]; ++e) {
            const int k = a_cols[e];
            const value_type a = a_vals[e];
            for (int p = b_ptrs[k]; p < b_ptrs[k + 1]; ++p) {
                const int col = b_cols[p];
                const int at = marker[col];
#if WRITE_COLS
                if (at < start) {
                    marker[col] = end;
                    c_cols[end] = col;
                    c_vals[end++] = mul(a, b_vals[p]);
                    continue;
                }
#endif
                c_vals[at] += mul(a, b_vals[p]);  // a_ik b_kj
            }
        }
#if WRITE_COLS
        const int len = end - start;
#if COUNT_ROWS
        counts[i] = len;
#endif
        FOR_SHELL_GAPS(gap, len) {
            for (int s = start + gap; s < end; ++s) {
                const int col = c_cols[s];
                const value_type v = c_vals[s];
                int q = s;
                while (q - gap >= start && c_cols[q - gap] > col) {
                    c_cols[q] = c_cols[q - gap];
                    c_vals[q] = c_vals[q - gap];
                    q -= gap;
                }
                c_cols[q] = col;
                c_vals[q] = v;
            }
        }
#endif
    }
}

// -- one pass: rows written at bounds, then compacted ----------------------------------------
// Row i of C has at most bound_i = min(sum over a_ik of |B_k|, columns) entries: the rows are
// written once (fill_rows, merge_long_rows, fill_rows_dense with COUNT_ROWS: columns, values
// and counts[i]) at the prefix sum of the bounds in scratch, then copied to their places
// (compact_rows) at the prefix sum of the counts: the counting merge is not run.

// bounds[i] = bound_i for the items = n + 1 rows (bounds[n] = counts[n] = 0: the prefix sums'
// totals); a bound above row_limit is cut to it and *flag set (its sum could pass INT_MAX: the
// caller counts instead)
__kernel void bound_rows(const int items, const int chunk, const int columns, const int row_limit,
                         __global const int* restrict a_ptrs, __global const int* restrict a_cols,
                         __global const int* restrict b_ptrs, __global int* restrict bounds,
                         __global int* restrict counts, __global int* restrict flag)
{
    const int n = items - 1;
    FOR_ITEMS(i, items) {
        if (i == n) {
            bounds[n] = 0;
            counts[n] = 0;
            continue;
        }
        int bound = min(product_bound(i, columns, a_ptrs, a_cols, b_ptrs), columns);
        if (bound > row_limit) {
            *flag = 1;
            bound = row_limit;
        }
        bounds[i] = bound;
    }
}

// Row i of C from its place in scratch (from_ptrs[i], to_ptrs[i + 1] - to_ptrs[i] entries) to
// to_ptrs[i]
__kernel void compact_rows(const int n, const int chunk, __global const int* restrict from_ptrs,
                           __global const int* restrict from_cols, __global const value_type* restrict from_vals,
                           __global const int* restrict to_ptrs, __global int* restrict to_cols,
                           __global value_type* restrict to_vals)
{
    FOR_ITEMS(i, n) {
        const int from = from_ptrs[i], to = to_ptrs[i], len = to_ptrs[i + 1] - to;
        for (int p = 0; p < len; ++p) {
            to_cols[to + p] = from_cols[from + p];
            to_vals[to + p] = from_vals[from + p];
        }
    }
}

// -- transpose ------------------------------------------------------------------------------

// counts[c + 1] += 1 for every entry in column c (counts zeroed, m + 1 of them: counts[0]
// stays 0, so that the exclusive prefix sum leaves the start of row c of T at c + 1)
__kernel void count_columns(const int nnz, const int chunk, __global const int* restrict cols,
                            volatile __global int* restrict counts)
{
    FOR_ITEMS(e, nnz) {
        atomic_inc(counts + cols[e] + 1);
    }
}

// Each entry (i, c) of A to row c of T, at the next free place of that row, t_ptrs[c + 1] (the
// start of row c after count_columns and the prefix sum: the scatter leaves there its end, the
// start of row c + 1, so that t_ptrs end as T's row pointers): its row i and its entry e
// (source); the rows of T are sorted afterwards (sort_transposed)
__kernel void scatter_entries(const int n, const int chunk, __global const int* restrict a_ptrs,
                              __global const int* restrict a_cols, volatile __global int* restrict t_ptrs,
                              __global int* restrict t_cols, __global int* restrict source)
{
    FOR_ITEMS(i, n) {
        for (int e = a_ptrs[i]; e < a_ptrs[i + 1]; ++e) {
            const int p = atomic_inc(t_ptrs + a_cols[e] + 1);
            t_cols[p] = i;
            source[p] = e;
        }
    }
}

// Row r of T sorted by column, its sources with it (shell sort: the columns of a row are distinct,
// so that the result is the same whatever order the scatter left)
__kernel void sort_transposed(const int m, const int chunk, __global const int* restrict t_ptrs,
                              __global int* restrict t_cols, __global int* restrict source)
{
    FOR_ITEMS(r, m) {
        sort_int_pairs(t_cols, source, t_ptrs[r], t_ptrs[r + 1]);
    }
}

// t_vals[p] = a_vals[source[p]] (conjugated with CONJUGATE)
__kernel void gather_values(const int nnz, const int chunk, __global const int* restrict source,
                            __global const value_type* restrict a_vals, __global value_type* restrict t_vals)
{
    FOR_ITEMS(p, nnz) {
#if CONJUGATE
        t_vals[p] = conj_value(a_vals[source[p]]);
#else
        t_vals[p] = a_vals[source[p]];
#endif
    }
}
