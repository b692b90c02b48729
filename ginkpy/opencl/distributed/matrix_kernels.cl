// Kernels of the distributed Matrix. Vectors are n x k row-major; entry (i, j) at i * k + j.
#include "common.cl"

// out[i, j] = b[rows[i], j]: the rows of b that other ranks need, one work-item per entry of out
__kernel void row_gather(const int size, const int k, __global const int* rows,
                         __global const value_type* b, __global value_type* out)
{
    const int e = get_global_id(0);
    if (e < size) {
        const int i = k == 1 ? e : e / k;
        const int j = e - i * k;
        out[e] = b[rows[i] * k + j];
    }
}

// The non-local part of a product, on the rows that have one (rows[i], i < r; B compressed to
// them, r x g, its columns the ghost rows): y_i = (B ghost)_i, x[rows[i]] += alpha s y_i with
// s = scale[rows[i]] where HAS_SCALE (a Jacobi sweep's D^-1), and where DOTS > 0 the partial sums
// of conj(u[rows[i]]) alpha s y_i (DOTS 2: and of conj(w[rows[i]]) alpha s y_i) per work-group
// and column (partials: groups x DOTS k): the part of u^H x a product that forms the dots
// while it computes x leaves out. Work-group (g, c): rows g * size .. of column c.
__kernel void add_non_local(const int r, const int k, __global const value_type* alpha, const int alpha_stride,
                            __global const int* row_ptrs, __global const int* col_idxs,
                            __global const value_type* values, __global const int* rows,
                            __global const value_type* ghost, __global const value_type* scale,
                            __global value_type* x, __global const value_type* u,
                            __global const value_type* w, __global value_type* partials,
                            __local value_type* tmp)
{
    const int i = get_global_id(0), c = get_global_id(1), lid = get_local_id(0);
    value_type du = 0, dw = 0;
    if (i < r) {
        value_type y = 0;
        for (int e = row_ptrs[i]; e < row_ptrs[i + 1]; ++e) y += mul(values[e], ghost[col_idxs[e] * k + c]);
        const int row = rows[i];
#if HAS_SCALE
        y = mul(scale[row], y);
#endif
        y = mul(alpha[c * alpha_stride], y);
        x[row * k + c] += y;
#if DOTS > 0
        du = mul_conj(u[row * k + c], y);
#endif
#if DOTS > 1
        dw = mul_conj(w[row * k + c], y);
#endif
    }
#if DOTS > 0
    const int size = get_local_size(0), group = get_group_id(0);
    const value_type su = local_sum(tmp, du, lid, size, 1);
    if (lid == 0) partials[group * DOTS * k + c] = su;
#if DOTS > 1
    barrier(CLK_LOCAL_MEM_FENCE);
    const value_type sw = local_sum(tmp, dw, lid, size, 1);
    if (lid == 0) partials[group * DOTS * k + k + c] = sw;
#endif
#endif
}

// Gershgorin's bound on the rows with non-local entries: out[i] = |inv_diag[rows[i]]| (sum_j
// |local[rows[i], j]| + sum_j |B[i, j]|), B the non-local block compressed to those rows
// (one work-item per row).
__kernel void row_bounds(const int r, __global const int* local_ptrs, __global const value_type* local_values,
                         __global const int* row_ptrs, __global const value_type* values,
                         __global const int* rows, __global const value_type* inv_diag,
                         __global real_type* out)
{
    const int i = get_global_id(0);
    if (i >= r) return;
    const int row = rows[i];
    real_type sum = 0;
    for (int e = local_ptrs[row]; e < local_ptrs[row + 1]; ++e) sum += abs_value(local_values[e]);
    for (int e = row_ptrs[i]; e < row_ptrs[i + 1]; ++e) sum += abs_value(values[e]);
    out[i] = abs_value(inv_diag[row]) * sum;
}
