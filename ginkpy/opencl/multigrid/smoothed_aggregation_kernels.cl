// Smoothed aggregation's smoother S = I - (w / rho) D^-1 A on A's pattern, with rho
// Gershgorin's bound max_i sum_j |a_ij| / |a_ii| on the eigenvalues of D^-1 A, made without a
// host read: per work-item partial maxima of the row sums, their maximum, then the values.
#include "common.cl"

// the row sum sum_j |a_ij| / |a_ii| of row i; flags[0] = 1 where a_ii is zero or not stored
inline real_type row_bound(const int i, __global const int* restrict ptrs, __global const int* restrict cols,
                           __global const value_type* restrict vals, __global int* restrict flags)
{
    real_type sum = 0, diag = 0;
    for (int e = ptrs[i]; e < ptrs[i + 1]; ++e) {
        const real_type v = abs_value(vals[e]);
        sum += v;
        if (cols[e] == i) diag = v;
    }
    if (diag == 0) {
        flags[0] = 1;
        return 0;
    }
    return sum / diag;
}

// partials[t] = the largest row bound of work-item t's rows: a contiguous stretch (CPU) or
// every items-th row from t (GPU)
__kernel void gershgorin_partials(const int n, const int contiguous, __global const int* restrict ptrs,
                                  __global const int* restrict cols, __global const value_type* restrict vals,
                                  __global real_type* restrict partials, __global int* restrict flags)
{
    const int t = get_global_id(0), items = get_global_size(0);
    const int chunk = (n + items - 1) / items;
    const int begin = contiguous ? t * chunk : t;
    const int end = contiguous ? min(n, begin + chunk) : n;
    const int step = contiguous ? 1 : items;
    real_type best = 0;
    for (int i = begin; i < end; i += step) best = max(best, row_bound(i, ptrs, cols, vals, flags));
    partials[t] = best;
}

// rho[0] = the largest of the partials (1 where all are 0)
__kernel void finish_bound(const int parts, __global const real_type* restrict partials, __global real_type* restrict rho)
{
    real_type best = 0;
    for (int t = 0; t < parts; ++t) best = max(best, partials[t]);
    rho[0] = best > 0 ? best : (real_type)1;
}

// s_ij = delta_ij - (w / rho) a_ij / a_ii
__kernel void smoother_values(const int n, const int chunk, const real_type relax,
                              __global const real_type* restrict rho, __global const int* restrict ptrs,
                              __global const int* restrict cols, __global const value_type* restrict vals,
                              __global value_type* restrict out)
{
    const real_type w = relax / rho[0];
    for (int i = get_global_id(0) * chunk, i_end = min(n, i + chunk); i < i_end; ++i) {
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
