// Relaxation steps shared by Chebyshev and Multigrid's smoother (see
// reference/components/relaxation_kernels.py): one work-item per entry (i, c) of the n x k
// vectors; the row of A is read by the work-items of its k columns.
#include "common.cl"

// inv_diag = 1 / a_ii (0 where the diagonal entry is zero or not stored, whose smallest row
// goes to *first_zero by atomic_min).
__kernel void invert_diagonal(const int n, __global const index_type* restrict row_ptrs,
                              __global const index_type* restrict col_idxs,
                              __global const value_type* restrict values,
                              __global value_type* restrict inv_diag, __global int* restrict first_zero)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    value_type diag = 0;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        if (col_idxs[e] == row) diag = values[e];
    }
    inv_diag[row] = is_zero(diag) ? 0 : divide(to_value(1), diag);
    if (is_zero(diag)) atomic_min(first_zero, row);
}

// x = beta D^-1 b; d = x where keep_d
__kernel void relax_first(const int size, const int k, const real_type beta,
                          __global const value_type* restrict inv_diag,
                          __global const value_type* restrict b, __global value_type* restrict x,
                          __global value_type* restrict d, const int keep_d)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const value_type v = beta * mul(inv_diag[k == 1 ? idx : idx / k], b[idx]);
    x[idx] = v;
    if (keep_d) d[idx] = v;
}

// (A x) at entry idx of the n x k x (row-major): row idx / k of the CSR matrix A against column
// idx % k of x
inline value_type product_entry(const int idx, const int k, __global const index_type* row_ptrs,
                                __global const index_type* col_idxs, __global const value_type* values,
                                __global const value_type* x)
{
    const int row = k == 1 ? idx : idx / k, c = COLUMN(idx, k);
    value_type ax = 0;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) ax += mul(values[e], x[col_idxs[e] * k + c]);
    return ax;
}

// r = b - A x
__kernel void residual(const int size, const int k, __global const index_type* restrict row_ptrs,
                       __global const index_type* restrict col_idxs,
                       __global const value_type* restrict values,
                       __global const value_type* restrict b, __global const value_type* restrict x,
                       __global value_type* restrict r)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    r[idx] = b[idx] - product_entry(idx, k, row_ptrs, col_idxs, values, x);
}

// d = alpha d + beta D^-1 (b - A x) (without alpha d unless keep_d and alpha != 0: d is not
// read then, it may be uninitialized); x_new = x + d
__kernel void relax(const int size, const int k, const real_type alpha, const real_type beta,
                    __global const index_type* restrict row_ptrs,
                    __global const index_type* restrict col_idxs,
                    __global const value_type* restrict values,
                    __global const value_type* restrict inv_diag,
                    __global const value_type* restrict b, __global const value_type* restrict x,
                    __global value_type* restrict d, const int keep_d,
                    __global value_type* restrict x_new)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const value_type ax = product_entry(idx, k, row_ptrs, col_idxs, values, x);
    value_type update = beta * mul(inv_diag[k == 1 ? idx : idx / k], b[idx] - ax);
    if (keep_d) {
        if (alpha != 0) update = alpha * d[idx] + update;
        d[idx] = update;
    }
    x_new[idx] = x[idx] + update;
}

// x += update in the columns whose status is STATUS_RUNNING
__kernel void add_running(const int size, const int k, __global const value_type* restrict update,
                          __global value_type* restrict x, __global const uchar* restrict status)
{
    const int idx = get_global_id(0);
    if (idx >= size || status[COLUMN(idx, k)] != STATUS_RUNNING) return;
    x[idx] += update[idx];
}

// partial[g] = max over the rows of chunk g of |inv_diag_i| sum_j |a_ij|
__kernel void gershgorin_bound(const int n, const int chunk, __global const index_type* restrict row_ptrs,
                               __global const value_type* restrict values,
                               __global const value_type* restrict inv_diag,
                               __global real_type* restrict partial)
{
    const int g = get_global_id(0);
    const int begin = g * chunk;
    if (begin >= n) return;
    const int end = min(n, begin + chunk);
    real_type bound = 0;
    for (int row = begin; row < end; row++) {
        real_type sum = 0;
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) sum += abs_value(values[e]);
        bound = fmax(bound, abs_value(inv_diag[row]) * sum);
    }
    partial[g] = bound;
}

// |a| without the math library's fabs, which a CPU device (PoCL) calls as a function
#if VALUE_COMPLEX
#define MAGNITUDE(a) abs_value(a)
#else
#define MAGNITUDE(a) ((a) < 0 ? -(a) : (a))
#endif

// The setup of weighted Jacobi: inv_diag = 1 / a_ii (0 where the diagonal entry is zero or not
// stored, whose smallest row goes to *first_zero by atomic_min) and partial[g] = the largest
// |inv_diag_i| sum_j |a_ij| over the rows of work-group g (Gershgorin's bound on the eigenvalues
// of D^-1 A is the largest partial). A work-item takes `chunk` rows at a time, strided by the
// whole launch: 1 on a GPU (neighbouring work-items read neighbouring rows), a long stretch on
// a CPU.
__kernel void jacobi_setup(const int n, const int chunk, __global const index_type* restrict row_ptrs,
                           __global const index_type* restrict col_idxs,
                           __global const value_type* restrict values,
                           __global value_type* restrict inv_diag, __global int* restrict first_zero,
                           __global real_type* restrict partial, __local real_type* tmp)
{
    const int lid = get_local_id(0), width = get_local_size(0);
    real_type bound = 0;
    for (int base = get_global_id(0) * chunk; base < n; base += get_global_size(0) * chunk) {
        for (int row = base; row < min(n, base + chunk); row++) {
            value_type diag = 0;
            real_type sum = 0;
            for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
                if (col_idxs[e] == row) diag = values[e];
                sum += MAGNITUDE(values[e]);
            }
            const value_type inv = is_zero(diag) ? 0 : divide(to_value(1), diag);
            inv_diag[row] = inv;
            if (is_zero(diag)) atomic_min(first_zero, row);
            const real_type row_bound = MAGNITUDE(inv) * sum;
            bound = row_bound > bound ? row_bound : bound;
        }
    }
    tmp[lid] = bound;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = width / 2; s > 0; s /= 2) {
        if (lid < s && tmp[lid + s] > tmp[lid]) tmp[lid] = tmp[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partial[get_group_id(0)] = tmp[0];
}
