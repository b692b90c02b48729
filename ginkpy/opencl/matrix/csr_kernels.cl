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



// The sum of v over each segment of `width` consecutive work-items (width divides the
// work-group size), returned to the first work-item of the segment. Every work-item of the
// work-group must call it with the same width: it holds barriers.
inline value_type segment_sum(__local value_type* tmp, value_type v, const int lid, const int width)
{
    const int lane = lid % width;
    tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int active = width; active > 1;) {
        const int upper = (active + 1) >> 1;  // tmp[upper, active) is added to tmp[0, ...)
        if (lane + upper < active) tmp[lid] += tmp[lid + upper];
        barrier(CLK_LOCAL_MEM_FENCE);
        active = upper;
    }
    return tmp[lid];
}

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
    sum = segment_sum(partial, sum, lid, lanes);
    if (lane == 0 && row < n) STORE(row * k + c, sum);
}


// Long rows: the rows longer than `long_min` are cut into pieces of at most a few thousand
// nonzeros, one work-group per piece (piece p: nonzeros [piece_bounds[2p], piece_bounds[2p + 1])),
// whose sum goes to carry_vals[p] and is added by spmv_merge_path_fixup. The other rows are
// summed as in spmv_vector by `lanes` work-items each (1: one work-item per row, as in
// spmv_classical), in the work-groups after the pieces; a long row gets y = beta y there (0 in
// the plain SpMV). Both kinds of work-group reach the same segment_sum: PoCL's compiler has
// crashed on barriers after a work-group's early return.
__kernel void spmv_long_rows(SPMV_PARAMS, const int lanes, const int long_min, const int pieces,
                             __global const index_type* restrict piece_bounds,
                             __global value_type* restrict carry_vals,
                             __local value_type* partial)
{
    const int lid = get_local_id(0);
    const int size = get_local_size(0);
    const int g = get_group_id(0);
    const int c = get_global_id(1);
    // a piece: the whole work-group; another row: `lanes` work-items
    const bool piece = g < pieces;
    const int lane = lid & (lanes - 1);
    const int row = ((g - pieces) * size + lid) / lanes;
    value_type sum = 0;
    if (piece) {
        const int end = piece_bounds[2 * g + 1];
#pragma unroll 4
        for (int j = piece_bounds[2 * g] + lid; j < end; j += size) {
            sum += values[j] * b[col_idxs[j] * k + c];
        }
    } else if (row < n) {
        const int begin = row_ptrs[row];
        int end = row_ptrs[row + 1];
        if (end - begin > long_min) end = begin;
        for (int j = begin + lane; j < end; j += lanes) sum += values[j] * b[col_idxs[j] * k + c];
    }
    sum = segment_sum(partial, sum, lid, piece ? size : lanes);
    if (piece) {
        if (lid == 0) carry_vals[g * k + c] = sum;
    } else if (lane == 0 && row < n) {
        STORE(row * k + c, sum);
    }
}


// Merge path (Merrill & Garland, SC16): the path that merges the n row ends with the nnz
// nonzeros (row end i comes right after nonzero row_ptrs[i + 1] - 1, at path position
// row_ptrs[i + 1] + i) is cut into parts, precomputed in `bounds`: part g runs from diagonal
// bounds[2g], where row bounds[2g + 1] is in progress, to diagonal bounds[2g + 2]. A part's
// nonzeros are then [bounds[2g] - bounds[2g + 1], bounds[2g + 2] - bounds[2g + 3]).
// The partial sum of the row in progress at the end of part g (row bounds[2g + 3], its carry)
// goes to carry_vals[g] and is added by spmv_merge_path_fixup.

// One work-group per part. The work-group first stages the products of the part's nonzeros
// with b, and the ends of its rows, in local memory, reading the matrix contiguously; then each
// work-item takes an equal piece of the part's path in local memory, so every work-item does
// the same work however long the rows are. A work-item writes the rows it finishes; the sum of
// the row it leaves unfinished is added by a segmented sum over the work-group, and the one
// that leaves the work-group is its carry.
#ifdef MERGE_PATH_WORK_GROUP
// declared, so that the compiler may give each work-item more registers than for the largest
// work-group the device allows
__attribute__((reqd_work_group_size(MERGE_PATH_WORK_GROUP, 1, 1)))
#endif
__kernel void spmv_merge_path(SPMV_PARAMS, __global const index_type* restrict bounds,
                              __global value_type* restrict carry_vals,
                              __local index_type* l_ends, __local value_type* l_vals)
{
    const int lid = get_local_id(0);
    const int size = get_local_size(0);
    const int g = get_group_id(0);
    const int c = get_global_id(1);
    const int first_row = bounds[2 * g + 1];
    const int first = bounds[2 * g] - first_row;
    const int rows = bounds[2 * g + 3] - first_row;  // row ends in this part
    const int nnz = bounds[2 * g + 2] - bounds[2 * g + 3] - first;
    // l_vals[t]: product of nonzero first + t; l_ends[i]: end of row first_row + i (local)
#pragma unroll 4
    for (int t = lid; t < nnz; t += size) {
        l_vals[t] = values[first + t] * b[col_idxs[first + t] * k + c];
    }
    for (int i = lid; i < rows; i += size) l_ends[i] = row_ptrs[first_row + i + 1] - first;
    barrier(CLK_LOCAL_MEM_FENCE);

    // this work-item's piece: path steps [d, d_end) of the part; row = row ends before d
    const int steps = rows + nnz;
    const int piece = (steps + size - 1) / size;
    int d = min(lid * piece, steps);
    const int d_end = min(d + piece, steps);
    int row = 0;
    int hi = rows;
    while (row < hi) {
        const int mid = (row + hi) >> 1;
        if (l_ends[mid] + mid < d) row = mid + 1; else hi = mid;
    }
    int j = d - row;
    value_type sum = 0;
    for (; d < d_end; ++d) {
        if (row < rows && j == l_ends[row]) {  // the end of row comes next on the path
            STORE((first_row + row) * k + c, sum);
            sum = 0;
            ++row;
        } else {
            sum += l_vals[j++];
        }
    }

    // segmented inclusive scan over the work-items that stopped inside the same row (rows only
    // grow with lid, so equal rows are contiguous), between two halves of l_vals (2 or more
    // items per work-item make it long enough) in turn, so that one barrier per step suffices;
    // l_ends is reused for the rows
    barrier(CLK_LOCAL_MEM_FENCE);
    __local value_type* from = l_vals;
    __local value_type* to = l_vals + size;
    l_ends[lid] = row;
    from[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);  // also publishes the rows written above
    for (int offset = 1; offset < size; offset <<= 1) {
        if (lid >= offset && l_ends[lid - offset] == row) sum += from[lid - offset];
        to[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        __local value_type* swap = from;
        from = to;
        to = swap;
    }
    // the last work-item of each run holds its total
    if (lid == size - 1) {
        carry_vals[g * k + c] = sum;
    } else if (l_ends[lid + 1] != row) {
        // row was finished (and written) by a later work-item of this group
        y[(first_row + row) * k + c] += (advanced ? alpha[c * alpha_stride] : 1) * sum;
    }
}


// Row blocks, for CPUs: one work-item per part of the merge path, running its rows one after
// the other (the parts are nonzero-balanced blocks of whole rows, except where a row is longer
// than half a part).
__kernel void spmv_row_blocks(SPMV_PARAMS, const int parts,
                              __global const index_type* restrict bounds,
                              __global value_type* restrict carry_vals)
{
    const int g = get_global_id(0);
    const int c = get_global_id(1);
    if (g >= parts) return;
    int row = bounds[2 * g + 1];
    const int row_end = bounds[2 * g + 3];
    int j = bounds[2 * g] - row;
    const int j_end = bounds[2 * g + 2] - row_end;
    value_type sum = 0;
    for (; row < row_end; ++row) {
        const int end = row_ptrs[row + 1];
        for (; j < end; ++j) sum += values[j] * b[col_idxs[j] * k + c];
        STORE(row * k + c, sum);
        sum = 0;
    }
    for (; j < j_end; ++j) sum += values[j] * b[col_idxs[j] * k + c];
    carry_vals[g * k + c] = sum;
}


// Adds the sums of the parts of each row split over parts, given in `runs` as (first part,
// number of parts, row): the first long_count rows (those of many parts) with `lanes`
// work-items each, in the first work-groups, the others with one each, in the work-groups after.
__kernel void spmv_merge_path_fixup(const int k, const int count, const int long_count,
                                    const int lanes, __global const index_type* restrict runs,
                                    __global const value_type* restrict carry_vals,
                                    __global value_type* restrict y, const int advanced,
                                    __global const value_type* restrict alpha,
                                    const int alpha_stride, __local value_type* partial)
{
    const int lid = get_local_id(0);
    const int size = get_local_size(0);
    const int g = get_group_id(0);
    const int c = get_global_id(1);
    const int long_groups = (long_count * lanes + size - 1) / size;
    const bool is_long = g < long_groups;
    const int width = is_long ? lanes : 1;
    const int r = is_long ? (int)get_global_id(0) / lanes : long_count + (g - long_groups) * size + lid;
    const int end = is_long ? long_count : count;
    value_type sum = 0;
    if (r < end) {
        const int first = runs[3 * r];
        const int parts = runs[3 * r + 1];
#pragma unroll 4
        for (int h = lid & (width - 1); h < parts; h += width) sum += carry_vals[(first + h) * k + c];
    }
    sum = segment_sum(partial, sum, lid, width);
    if ((lid & (width - 1)) == 0 && r < end) {
        y[runs[3 * r + 2] * k + c] += (advanced ? alpha[c * alpha_stride] : 1) * sum;
    }
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

