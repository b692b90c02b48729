// Smoothed aggregation's smoother S = I - (w / rho) D^-1 A on A's pattern, with rho
// Gershgorin's bound max_i sum_j |a_ij| / |a_ii| on the eigenvalues of D^-1 A, made without a
// host read: per work-item partial maxima of the row sums, their maximum, then the values.
#include "common.cl"

// the row sum sum_j |a_ij| / |a_ii| of row i; -1 where a_ii is zero or not stored
inline real_type row_bound(const int i, __global const int* restrict ptrs, __global const int* restrict cols,
                           __global const value_type* restrict vals)
{
    real_type sum = 0, diag = 0;
    for (int e = ptrs[i]; e < ptrs[i + 1]; ++e) {
        const real_type v = abs_value(vals[e]);
        sum += v;
        if (cols[e] == i) diag = v;
    }
    return diag == 0 ? (real_type)-1 : sum / diag;
}

// partials[t] = the largest row bound of work-item t's rows (-1: one of them has no nonzero
// diagonal entry): a contiguous stretch (CPU) or every items-th row from t (GPU)
__kernel void gershgorin_partials(const int n, const int contiguous, __global const int* restrict ptrs,
                                  __global const int* restrict cols, __global const value_type* restrict vals,
                                  __global real_type* restrict partials)
{
    const int t = get_global_id(0), items = get_global_size(0);
    const int chunk = (n + items - 1) / items;
    const int begin = contiguous ? t * chunk : t;
    const int end = contiguous ? min(n, begin + chunk) : n;
    const int step = contiguous ? 1 : items;
    real_type best = 0;
    int missing = 0;
    for (int i = begin; i < end; i += step) {
        const real_type bound = row_bound(i, ptrs, cols, vals);
        missing |= bound < 0;
        best = max(best, bound);
    }
    partials[t] = missing ? (real_type)-1 : best;
}

// partials[parts] = rho, the largest of the partials (1 where all are 0); flags[0] = 1 where a
// partial says a diagonal entry is missing, else 0
__kernel void finish_bound(const int parts, __global real_type* restrict partials, __global int* restrict flags)
{
    real_type best = 0;
    int missing = 0;
    for (int t = 0; t < parts; ++t) {
        missing |= partials[t] < 0;
        best = max(best, partials[t]);
    }
    partials[parts] = best > 0 ? best : (real_type)1;
    flags[0] = missing;
}

// s_ij = delta_ij - (w / rho) a_ij / a_ii
__kernel void smoother_values(const int n, const int chunk, const real_type relax,
                              __global const real_type* restrict rho, const int at, __global const int* restrict ptrs,
                              __global const int* restrict cols, __global const value_type* restrict vals,
                              __global value_type* restrict out)
{
    const real_type w = relax / rho[at];
    FOR_ITEMS(i, n) {
        value_type diag = 0;
        for (int e = ptrs[i]; e < ptrs[i + 1]; ++e) {
            if (cols[e] == i) diag = vals[e];
        }
        for (int e = ptrs[i]; e < ptrs[i + 1]; ++e) {
            const value_type s = -w * divide(vals[e], diag);
            out[e] = cols[e] == i ? s + to_value(1) : s;
        }
    }
}

// -- P = S P_t from S's rows and the aggregates ------------------------------------------------
// P_t has one 1 per row k, at column agg[k]: row i of P = sum over the entries s_ik of row i of
// S of s_ik e_agg[k], the entries of one aggregate merged. Per row of S (one work-item: rows
// are short): its entries sorted by (aggregate, entry) into keys/order (shell sort, as long rows
// need; keys and order: the first and second half of sorted, offset apart), the distinct
// aggregates counted; then P's columns written, each entry's slot (the
// entry of P it adds to) kept, and the values summed in the order of S's entries (so that new
// values of S are one pass over the slots: prolongation_values).

// p_vals of row i = sum of s_ik into slot[e], in the order of S's entries
inline void prolongation_row(const int i, __global const int* restrict s_ptrs, __global const value_type* restrict s_vals,
                             __global const int* restrict slots, __global const int* restrict p_ptrs,
                             __global value_type* restrict p_vals)
{
    for (int p = p_ptrs[i]; p < p_ptrs[i + 1]; ++p) p_vals[p] = 0;
    for (int e = s_ptrs[i]; e < s_ptrs[i + 1]; ++e) p_vals[slots[e]] += s_vals[e];
}

// counts[i] = the distinct aggregates among the columns of row i of S (counts[n] = 0: the prefix
// sum's total, items = n + 1); keys/order of row i's entries sorted by (agg[col], entry)
__kernel void count_prolongation(const int items, const int chunk, const int offset,
                                 __global const int* restrict s_ptrs, __global const int* restrict s_cols,
                                 __global const int* restrict agg, __global int* restrict sorted,
                                 __global int* restrict counts)
{
    const int n = items - 1;
    __global int* restrict keys = sorted;
    __global int* restrict order = sorted + offset;
    FOR_ITEMS(i, items) {
        if (i == n) {
            counts[n] = 0;
            continue;
        }
        const int begin = s_ptrs[i], end = s_ptrs[i + 1];
        for (int e = begin; e < end; ++e) {
            keys[e] = agg[s_cols[e]];
            order[e] = e;
        }
        sort_int_pairs(keys, order, begin, end);
        int count = 0;
        for (int q = begin; q < end; ++q) count += q == begin || keys[q] != keys[q - 1];
        counts[i] = count;
    }
}

// Row i of P at p_ptrs[i]: its columns (the sorted distinct aggregates), each entry's slot, the values
__kernel void fill_prolongation(const int n, const int chunk, const int offset, __global const int* restrict s_ptrs,
                                __global const value_type* restrict s_vals, __global const int* restrict sorted,
                                __global const int* restrict p_ptrs, __global int* restrict p_cols,
                                __global value_type* restrict p_vals, __global int* restrict slots)
{
    __global const int* restrict keys = sorted;
    __global const int* restrict order = sorted + offset;
    FOR_ITEMS(i, n) {
        int p = p_ptrs[i] - 1;
        for (int q = s_ptrs[i]; q < s_ptrs[i + 1]; ++q) {
            if (q == s_ptrs[i] || keys[q] != keys[q - 1]) p_cols[++p] = keys[q];
            slots[order[q]] = p;
        }
        prolongation_row(i, s_ptrs, s_vals, slots, p_ptrs, p_vals);
    }
}

// P's values again from S's (same pattern, the slots of fill_prolongation)
__kernel void prolongation_values(const int n, const int chunk, __global const int* restrict s_ptrs,
                                  __global const value_type* restrict s_vals, __global const int* restrict slots,
                                  __global const int* restrict p_ptrs, __global value_type* restrict p_vals)
{
    FOR_ITEMS(i, n) {
        prolongation_row(i, s_ptrs, s_vals, slots, p_ptrs, p_vals);
    }
}
