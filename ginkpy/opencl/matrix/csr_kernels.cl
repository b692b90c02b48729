// Kernels of Csr. Row pointers and column indices are index_type (int); b and y are row-major,
// entry (i, c) at i * k + c. The SpMV kernels run on a 2-D range whose second dimension is the
// column c of b and y; they compute y = A b, or with `advanced` y = alpha A b + beta y, where
// alpha and beta are 1 x 1 or 1 x k and read at c * stride (stride 0: one value for all columns).
// All index math is int: the launcher checks that every index fits.
#include "common.cl"

// y[idx] = sum, or alpha sum + beta y[idx] in the advanced SpMV
#define STORE(idx, sum)                                                              \
    y[idx] = advanced ? alpha[c * alpha_stride] * (sum) + beta[c * beta_stride] * y[idx] \
                      : (sum)

#define SPMV_PARAMS                                                                  \
    const int n, const int k, __global const index_type* restrict row_ptrs,         \
    __global const index_type* restrict col_idxs,                                    \
    __global const value_type* restrict values, __global const value_type* restrict b, \
    __global value_type* restrict y, const int advanced,                             \
    __global const value_type* restrict alpha, const int alpha_stride,               \
    __global const value_type* restrict beta, const int beta_stride


// Classical: one work-item per row. The lean path for short rows of similar length (stencils):
// neighbouring work-items read neighbouring rows, so a work-group streams one block of the matrix.
__kernel void spmv_classical(SPMV_PARAMS)
{
    const int row = get_global_id(0);
    const int c = get_global_id(1);
    if (row >= n) return;
    value_type sum = 0;
    const int end = row_ptrs[row + 1];
    for (int j = row_ptrs[row]; j < end; ++j) {
        sum += values[j] * b[col_idxs[j] * k + c];
    }
    STORE(row * k + c, sum);
}


// Vector: `lanes` work-items per row (a power of two dividing the work-group size) for longer
// rows: lane l sums entries l, l + lanes, ... of its row, so the lanes read the row together,
// then the partial sums are added pairwise in local memory (no sub-group functions needed).
__kernel void spmv_vector(SPMV_PARAMS, const int lanes, __local value_type* partial)
{
    const int lid = get_local_id(0);
    const int lane = lid & (lanes - 1);
    const int row = get_global_id(0) / lanes;
    const int c = get_global_id(1);
    value_type sum = 0;
    if (row < n) {
        const int end = row_ptrs[row + 1];
        for (int j = row_ptrs[row] + lane; j < end; j += lanes) {
            sum += values[j] * b[col_idxs[j] * k + c];
        }
    }
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int offset = lanes >> 1; offset > 0; offset >>= 1) {
        if (lane < offset) partial[lid] += partial[lid + offset];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && row < n) STORE(row * k + c, partial[lid]);
}


// Merge path (Merrill & Garland, SC16): the path that merges the n row ends with the nnz
// nonzeros (row end i comes right after nonzero row_ptrs[i + 1] - 1) is cut into one part per
// work-group, precomputed in `bounds`: part g runs from diagonal bounds[2g], where row
// bounds[2g + 1] is in progress, to diagonal bounds[2g + 2]. Each work-item takes an equal
// piece of its group's part, so every work-item does the same work however long the rows are.
// A work-item writes the rows it finishes; the partial sum of the row it leaves unfinished (its
// carry) is added by a segmented sum over the work-group's carries, and the one carry that
// leaves the work-group goes to carry_rows/carry_vals, added by spmv_merge_path_fixup.
// With one work-item per work-group (CPUs), each work-item runs a contiguous block of rows.
__kernel void spmv_merge_path(SPMV_PARAMS, __global const index_type* restrict bounds,
                              __global index_type* restrict carry_rows,
                              __global value_type* restrict carry_vals,
                              __local index_type* l_rows, __local value_type* l_vals)
{
    const int lid = get_local_id(0);
    const int last = get_local_size(0) - 1;
    const int g = get_group_id(0);
    const int c = get_global_id(1);
    const int group_begin = bounds[2 * g];
    const int group_end = bounds[2 * g + 2];
    const int piece = (group_end - group_begin + last) / (last + 1);
    const int d_begin = min(group_begin + lid * piece, group_end);
    const int d_end = min(d_begin + piece, group_end);
    // row = number of row ends before diagonal d_begin, searched within the group's rows
    int lo = bounds[2 * g + 1];
    int hi = bounds[2 * g + 3];
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (row_ptrs[mid + 1] + mid < d_begin) lo = mid + 1; else hi = mid;
    }
    l_rows[lid] = lo;
    barrier(CLK_LOCAL_MEM_FENCE);
    // this piece ends where the next one begins
    const int row_end = lid < last ? l_rows[lid + 1] : bounds[2 * g + 3];
    int row = lo;
    int j = d_begin - row;
    const int j_end = d_end - row_end;
    value_type sum = 0;
    for (; row < row_end; ++row) {
        const int end = row_ptrs[row + 1];
        for (; j < end; ++j) sum += values[j] * b[col_idxs[j] * k + c];
        STORE(row * k + c, sum);
        sum = 0;
    }
    for (; j < j_end; ++j) sum += values[j] * b[col_idxs[j] * k + c];

    // carries: segmented inclusive scan over the work-items that stopped inside the same row
    // (rows only grow with lid, so equal rows are contiguous)
    barrier(CLK_LOCAL_MEM_FENCE);
    l_rows[lid] = row_end;
    l_vals[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // also publishes the rows written above
    for (int offset = 1; offset <= last; offset <<= 1) {
        const value_type before = lid >= offset && l_rows[lid - offset] == row_end
                                      ? l_vals[lid - offset] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        l_vals[lid] += before;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // the last work-item of each run holds its total; row n means the path has ended
    if (lid == last) {
        if (c == 0) carry_rows[g] = row_end;
        carry_vals[g * k + c] = l_vals[lid];
    } else if (l_rows[lid + 1] != row_end) {
        // row_end was finished (and written) by work-item lid + 1 of this group
        y[row_end * k + c] += (advanced ? alpha[c * alpha_stride] : 1) * l_vals[lid];
    }
}


// Adds the carries that left their work-group: the first of each run of carries for one row
// adds the whole run (a run spans as many groups as that row's length needs).
__kernel void spmv_merge_path_fixup(const int n, const int k, const int groups,
                                    __global const index_type* restrict carry_rows,
                                    __global const value_type* restrict carry_vals,
                                    __global value_type* restrict y, const int advanced,
                                    __global const value_type* restrict alpha,
                                    const int alpha_stride)
{
    const int g = get_global_id(0);
    const int c = get_global_id(1);
    if (g >= groups) return;
    const int row = carry_rows[g];
    if (row >= n || (g > 0 && carry_rows[g - 1] == row)) return;
    value_type sum = 0;
    for (int h = g; h < groups && carry_rows[h] == row; ++h) sum += carry_vals[h * k + c];
    y[row * k + c] += (advanced ? alpha[c * alpha_stride] : 1) * sum;
}


// out (zeroed before) gets the nonzeros of each row: one work-item per row
__kernel void scatter_to_dense(const int n, const int m,
                               __global const index_type* restrict row_ptrs,
                               __global const index_type* restrict col_idxs,
                               __global const value_type* restrict values,
                               __global value_type* restrict out)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    const int end = row_ptrs[row + 1];
    for (int j = row_ptrs[row]; j < end; ++j) out[row * m + col_idxs[j]] = values[j];
}


// diag[i] = A(i, i), or 0 where it is not stored: binary search in the row's sorted columns
__kernel void extract_diagonal(const int size, __global const index_type* restrict row_ptrs,
                               __global const index_type* restrict col_idxs,
                               __global const value_type* restrict values,
                               __global value_type* restrict diag)
{
    const int row = get_global_id(0);
    if (row >= size) return;
    const int end = row_ptrs[row + 1];
    int lo = row_ptrs[row];
    int hi = end;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (col_idxs[mid] < row) lo = mid + 1; else hi = mid;
    }
    diag[row] = lo < end && col_idxs[lo] == row ? values[lo] : 0;
}

