// Sparse matrix-matrix product C = A B of Csr matrices (columns sorted in every row) and the
// transpose with the map of its entries. Row i of C is a k-way merge of the sorted rows B_k for
// the entries a_ik of row i of A: cursor[e] walks row col_idxs[e] of B, one cursor per entry of
// A (global scratch of nnz(A) ints, so that a row of any length needs no local memory and no
// second kernel). Each output column costs one scan over the row's cursors, which advances those
// at that column and finds the next smallest one. Column j of C sums a_ik b_kj over the entries
// of row i of A in their stored order: the same order on every device and run.
#include "common.cl"

#define NONE INT_MAX

// The items (rows) of a work-item: one on a GPU (chunk 1), a contiguous stretch on a CPU
#define FOR_ITEMS(i, count) \
    for (int i = get_global_id(0) * chunk, i##_end = min((count), i + chunk); i < i##_end; i++)

// cursor[e] = the start of row a_cols[e] of B; returns the smallest column among those rows
inline int start_merge(const int begin, const int end, __global const int* restrict a_cols,
                       __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                       __global int* restrict cursor)
{
    int next = NONE;
    for (int e = begin; e < end; ++e) {
        const int k = a_cols[e];
        const int p = b_ptrs[k];
        cursor[e] = p;
        if (p < b_ptrs[k + 1]) next = min(next, b_cols[p]);
    }
    return next;
}

// counts[i] = the number of distinct columns of row i of C, for the items = n + 1 rows of the
// row pointers (counts[n] = 0: the prefix sum's total)
__kernel void count_rows(const int items, const int chunk, __global const int* restrict a_ptrs,
                         __global const int* restrict a_cols, __global const int* restrict b_ptrs,
                         __global const int* restrict b_cols, __global int* restrict cursor,
                         __global int* restrict counts)
{
    const int n = items - 1;
    FOR_ITEMS(i, items) {
        if (i == n) {
            counts[n] = 0;
            continue;
        }
        const int begin = a_ptrs[i], end = a_ptrs[i + 1];
        int next = start_merge(begin, end, a_cols, b_ptrs, b_cols, cursor);
        int count = 0;
        while (next != NONE) {
            const int col = next;
            next = NONE;
            for (int e = begin; e < end; ++e) {
                const int stop = b_ptrs[a_cols[e] + 1];
                int p = cursor[e];
                if (p < stop && b_cols[p] == col) cursor[e] = ++p;
                if (p < stop) next = min(next, b_cols[p]);
            }
            ++count;
        }
        counts[i] = count;
    }
}

// Row i of C at c_ptrs[i]: its columns ascending (WRITE_COLS; else only the values, on the
// pattern an earlier product wrote) and c_ij = sum_k a_ik b_kj
__kernel void fill_rows(const int n, const int chunk, __global const int* restrict a_ptrs,
                        __global const int* restrict a_cols, __global const value_type* restrict a_vals,
                        __global const int* restrict b_ptrs, __global const int* restrict b_cols,
                        __global const value_type* restrict b_vals, __global int* restrict cursor,
                        __global const int* restrict c_ptrs, __global int* restrict c_cols,
                        __global value_type* restrict c_vals)
{
    FOR_ITEMS(i, n) {
        const int begin = a_ptrs[i], end = a_ptrs[i + 1];
        int next = start_merge(begin, end, a_cols, b_ptrs, b_cols, cursor);
        int out = c_ptrs[i];
        while (next != NONE) {
            const int col = next;
            value_type sum = 0;
            next = NONE;
            for (int e = begin; e < end; ++e) {
                const int stop = b_ptrs[a_cols[e] + 1];
                int p = cursor[e];
                if (p < stop && b_cols[p] == col) {
                    sum += mul(a_vals[e], b_vals[p]);  // a_ik b_kj
                    cursor[e] = ++p;
                }
                if (p < stop) next = min(next, b_cols[p]);
            }
#if WRITE_COLS
            c_cols[out] = col;
#endif
            c_vals[out] = sum;
            ++out;
        }
    }
}

// -- transpose ------------------------------------------------------------------------------

// counts[c] += 1 for every entry in column c (counts zeroed, m + 1 of them)
__kernel void count_columns(const int nnz, const int chunk, __global const int* restrict cols,
                            volatile __global int* restrict counts)
{
    FOR_ITEMS(e, nnz) {
        atomic_inc(counts + cols[e]);
    }
}

// Each entry (i, c) of A to row c of T, at a free place of that row (t_fill zeroed): its row i
// and its entry e (source); the rows of T are sorted afterwards (sort_transposed)
__kernel void scatter_entries(const int n, const int chunk, __global const int* restrict a_ptrs,
                              __global const int* restrict a_cols, __global const int* restrict t_ptrs,
                              volatile __global int* restrict t_fill, __global int* restrict t_cols,
                              __global int* restrict source)
{
    FOR_ITEMS(i, n) {
        for (int e = a_ptrs[i]; e < a_ptrs[i + 1]; ++e) {
            const int c = a_cols[e];
            const int p = t_ptrs[c] + atomic_inc(t_fill + c);
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
        const int begin = t_ptrs[r], len = t_ptrs[r + 1] - begin;
        for (int gap = len > 1 ? len / 2 : 0; gap > 0; gap = gap == 2 ? 1 : gap * 5 / 11) {
            for (int s = begin + gap; s < begin + len; ++s) {
                const int col = t_cols[s], src = source[s];
                int p = s;
                while (p - gap >= begin && t_cols[p - gap] > col) {
                    t_cols[p] = t_cols[p - gap];
                    source[p] = source[p - gap];
                    p -= gap;
                }
                t_cols[p] = col;
                source[p] = src;
            }
        }
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
