// Kernels of Csr. Row pointers and column indices are index_type (int); b and y are row-major,
// entry (i, c) at i * k + c. The SpMV kernels run on a 2-D range whose second dimension is the
// column c of b and y; they compute y = A b, or with `advanced` y = alpha A b + beta y, where
// alpha and beta are 1 x 1 or 1 x k and read at c * stride (stride 0: one value for all columns).
// All index math is int: the launcher checks that every index fits.
#include "matrix/csr_row_product.cl"  // (and common.cl, CSR_PARAMS, row_product)

// y[idx] = sum, or alpha sum + beta y[idx] in the advanced SpMV
#define STORE(idx, sum)                                                              \
    y[idx] = advanced ? mul(alpha[c * alpha_stride], (sum)) + mul(beta[c * beta_stride], y[idx]) \
                      : (sum)

#define SPMV_PARAMS                                                                  \
    const int n, const int k, CSR_PARAMS, __global const value_type* restrict b,                            \
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
    const value_type sum = row_product(row, k, c, row_ptrs, col_idxs, values, b);
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
            sum += mul(values[j], b[col_idxs[j] * k + c]);
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
            sum += mul(values[j], b[col_idxs[j] * k + c]);
        }
    } else if (row < n) {
        const int begin = row_ptrs[row];
        int end = row_ptrs[row + 1];
        if (end - begin > long_min) end = begin;
        for (int j = begin + lane; j < end; j += lanes) sum += mul(values[j], b[col_idxs[j] * k + c]);
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

// A work-group of MERGE_PATH_WORK_GROUP work-items sums MERGE_PATH_PARTS consecutive parts of
// at most MERGE_PATH_ITEMS steps per work-item (all three fixed at compile time: the loads are
// unrolled into registers). For each part, every work-item loads the column indices and values
// of its nonzeros lid, lid + MERGE_PATH_WORK_GROUP, ... of the part and the ends of its rows
// likewise (the matrix is read contiguously, all loads in flight at once), then the entries of
// b they name; the next part's loads are issued before the current part is summed, so that
// they arrive meanwhile. The products and row ends are staged in local memory, where each
// work-item takes an equal piece of the part's path, so that every work-item does the same
// work however long the rows are, and keeps the sums of the rows it finishes in local memory.
// The sum of the row a work-item leaves unfinished is added by a segmented scan over the
// work-group; the one that leaves the part is its carry. The part's row sums are then written
// to y together (coalesced). A part inside one row (no row end: long rows) skips the staging
// and the walk, and sums its products by a tree in the steps of the scan.
#ifdef MERGE_PATH_WORK_GROUP
#define MP_SIZE MERGE_PATH_WORK_GROUP
#define MP_ITEMS MERGE_PATH_ITEMS

// Part g of the merge path: first row, first nonzero, row ends and nonzeros in it
typedef struct {
    int first_row, first, rows, nnz;
} mp_part;

// Loads this work-item's column indices, values and row ends of part g (zero beyond the part)
inline mp_part mp_load(__global const index_type* restrict bounds, const int g, const int lid, CSR_PARAMS,
                       index_type* cols, value_type* vals, index_type* ends)
{
    mp_part p;
    p.first_row = bounds[2 * g + 1];
    p.first = bounds[2 * g] - p.first_row;
    p.rows = bounds[2 * g + 3] - p.first_row;
    p.nnz = bounds[2 * g + 2] - bounds[2 * g + 3] - p.first;
#pragma unroll
    for (int i = 0; i < MP_ITEMS; ++i) {
        const int t = lid + i * MP_SIZE;
        cols[i] = t < p.nnz ? col_idxs[p.first + t] : 0;
        vals[i] = t < p.nnz ? values[p.first + t] : 0;
        ends[i] = t < p.rows ? row_ptrs[p.first_row + t + 1] - p.first : 0;
    }
    return p;
}

__attribute__((reqd_work_group_size(MP_SIZE, 1, 1)))
__kernel void spmv_merge_path(SPMV_PARAMS, const int parts,
                              __global const index_type* restrict bounds,
                              __global value_type* restrict carry_vals)
{
    // l_vals[t]: product of the part's nonzero t; l_ends[i]: end of its row i (local index);
    // l_rows[i]: sum of its row i
    __local index_type l_ends[MP_SIZE * MP_ITEMS];
    __local value_type l_vals[MP_SIZE * MP_ITEMS];
    __local value_type l_rows[MP_SIZE * MP_ITEMS];
    const int lid = get_local_id(0);
    const int c = get_global_id(1);
    const int g_first = get_group_id(0) * MERGE_PATH_PARTS;
    const int g_end = min(g_first + MERGE_PATH_PARTS, parts);
    index_type cols[MP_ITEMS];
    index_type ends[MP_ITEMS];
    value_type prods[MP_ITEMS];
    mp_part p = mp_load(bounds, g_first, lid, row_ptrs, col_idxs, values, cols, prods, ends);
    for (int g = g_first; g < g_end; ++g) {
#pragma unroll
        for (int i = 0; i < MP_ITEMS; ++i) {
            if (lid + i * MP_SIZE < p.nnz) prods[i] = mul(prods[i], b[cols[i] * k + c]);
        }
        index_type next_cols[MP_ITEMS];
        index_type next_ends[MP_ITEMS];
        value_type next_prods[MP_ITEMS];
        mp_part next = p;
        if (g + 1 < g_end) {
            next = mp_load(bounds, g + 1, lid, row_ptrs, col_idxs, values, next_cols, next_prods,
                           next_ends);
        }
        // the same for the whole work-group, as is every branch below that holds a barrier
        const bool one_row = p.rows == 0;
        if (!one_row) {
#pragma unroll
            for (int i = 0; i < MP_ITEMS; ++i) {
                const int t = lid + i * MP_SIZE;
                if (t < p.nnz) l_vals[t] = prods[i];
                if (t < p.rows) l_ends[t] = ends[i];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        // this work-item's piece: path steps [d, d_end) of the part; row = row ends before d
        int row = 0;
        value_type sum = 0;
        if (one_row) {
#pragma unroll
            for (int i = 0; i < MP_ITEMS; ++i) sum += prods[i];
        } else {
            const int steps = p.rows + p.nnz;
            const int piece = (steps + MP_SIZE - 1) / MP_SIZE;
            int d = min(lid * piece, steps);
            const int d_end = min(d + piece, steps);
            int hi = p.rows;
            while (row < hi) {
                const int mid = (row + hi) >> 1;
                if (l_ends[mid] + mid < d) row = mid + 1; else hi = mid;
            }
            int j = d - row;
            for (; d < d_end; ++d) {
                if (row < p.rows && j == l_ends[row]) {  // the end of row comes next on the path
                    l_rows[row++] = sum;
                    sum = 0;
                } else {
                    sum += l_vals[j++];
                }
            }
        }

        // segmented inclusive scan over the work-items that stopped inside the same row (rows
        // only grow with lid, so equal rows are contiguous), between two halves of l_vals (2 or
        // more items per work-item make it long enough) in turn, so that one barrier per step
        // suffices; l_ends is reused for the rows. Inside one row: a tree sum in l_vals instead.
        barrier(CLK_LOCAL_MEM_FENCE);
        __local value_type* from = l_vals;
        __local value_type* to = l_vals + MP_SIZE;
        l_ends[lid] = row;
        from[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        int active = MP_SIZE;
        for (int offset = 1; offset < MP_SIZE; offset <<= 1) {
            if (one_row) {
                const int upper = (active + 1) >> 1;  // from[upper, active) is added to from[0, ...)
                if (lid + upper < active) from[lid] += from[lid + upper];
                active = upper;
            } else {
                if (lid >= offset && l_ends[lid - offset] == row) sum += from[lid - offset];
                to[lid] = sum;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (!one_row) {
                __local value_type* swap = from;
                from = to;
                to = swap;
            }
        }
        if (one_row) {
            if (lid == 0) carry_vals[g * k + c] = from[0];
        } else if (lid == MP_SIZE - 1) {  // the last work-item of each run holds its total
            carry_vals[g * k + c] = sum;
        } else if (l_ends[lid + 1] != row) {
            l_rows[row] += sum;  // row was finished by a later work-item of this group
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (int i = 0; i < MP_ITEMS; ++i) {
            const int r = lid + i * MP_SIZE;
            if (r < p.rows) STORE((p.first_row + r) * k + c, l_rows[r]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);  // before the next part is staged

#pragma unroll
        for (int i = 0; i < MP_ITEMS; ++i) {
            cols[i] = next_cols[i];
            ends[i] = next_ends[i];
            prods[i] = next_prods[i];
        }
        p = next;
    }
}
#endif


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
        for (; j < end; ++j) sum += mul(values[j], b[col_idxs[j] * k + c]);
        STORE(row * k + c, sum);
        sum = 0;
    }
    for (; j < j_end; ++j) sum += mul(values[j], b[col_idxs[j] * k + c]);
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
        y[runs[3 * r + 2] * k + c] += mul(advanced ? alpha[c * alpha_stride] : to_value(1), sum);
    }
}


// out (zeroed before) gets the nonzeros of each row: one work-item per row
__kernel void scatter_to_dense(const int n, const int m, CSR_PARAMS, __global value_type* restrict out)
{
    const int row = get_global_id(0);
    if (row >= n) return;
    const int end = row_ptrs[row + 1];
    for (int j = row_ptrs[row]; j < end; ++j) out[row * m + col_idxs[j]] = values[j];
}


// diag[i] = A(i, i), or 0 where it is not stored: binary search in the row's sorted columns
__kernel void extract_diagonal(const int size, CSR_PARAMS, __global value_type* restrict diag)
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



// ---- SpMV with dot products: y = A b and, in the same pass, the partial sums of u^H y (and
// of w^H y with TWO; w is y itself with W_IS_Y), one per work-group and column, written to
// partial[group * count + c] (and [group * count + k + c]), count = k or 2 k. The kernels loop
// over the rows with a stride of the whole launch, so that the number of work-groups, the
// partial sums per column, stays small for the kernel that sums them.

#ifndef TWO
#define TWO 0
#endif
#ifndef W_IS_Y
#define W_IS_Y 0
#endif

#define DOTS_PARAMS                                                                  \
    const int n, const int k, CSR_PARAMS, __global const value_type* restrict b,                            \
    __global value_type* y, __global const value_type* u, __global const value_type* w, \
    __global value_type* restrict partial

#if W_IS_Y
#define W_AT(i, sum) (sum)
#else
#define W_AT(i, sum) w[i]
#endif

inline void write_dots(value_type du, value_type dw, __local value_type* tmp, const int k,
                       const int c, const int g, __global value_type* partial)
{
    const int lid = get_local_id(0), size = get_local_size(0);
    const int count = (1 + TWO) * k;
    du = local_sum(tmp, du, lid, size, 1);
    if (lid == 0) partial[g * count + c] = du;
#if TWO
    barrier(CLK_LOCAL_MEM_FENCE);
    dw = local_sum(tmp, dw, lid, size, 1);
    if (lid == 0) partial[g * count + k + c] = dw;
#endif
}

__kernel void spmv_classical_dots(DOTS_PARAMS, __local value_type* tmp)
{
    const int c = get_global_id(1);
    const int stride = get_global_size(0);
    value_type du = 0, dw = 0;
    // ROWS_AT_ONCE rows a turn: their loads all in flight before the first store
    for (int row0 = get_global_id(0); row0 < n; row0 += ROWS_AT_ONCE * stride) {
        value_type sums[ROWS_AT_ONCE];
#pragma unroll
        for (int t = 0; t < ROWS_AT_ONCE; ++t) {
            const int row = row0 + t * stride;
            if (row < n) sums[t] = row_product(row, k, c, row_ptrs, col_idxs, values, b);
        }
#pragma unroll
        for (int t = 0; t < ROWS_AT_ONCE; ++t) {
            const int row = row0 + t * stride, i = row * k + c;
            if (row < n) {
                y[i] = sums[t];
                du += mul_conj(u[i], sums[t]);
                dw += mul_conj(W_AT(i, sums[t]), sums[t]);
            }
        }
    }
    write_dots(du, dw, tmp, k, c, get_group_id(0), partial);
}

__kernel void spmv_vector_dots(DOTS_PARAMS, const int lanes, __local value_type* tmp)
{
    const int lid = get_local_id(0);
    const int lane = lid & (lanes - 1);
    const int c = get_global_id(1);
    const int rows_per_group = get_local_size(0) / lanes;
    const int stride = get_num_groups(0) * rows_per_group;
    value_type du = 0, dw = 0;
    for (int first = get_group_id(0) * rows_per_group; first < n; first += stride) {
        const int row = first + lid / lanes;
        value_type sum = 0;
        if (row < n) {
            const int end = row_ptrs[row + 1];
            for (int j = row_ptrs[row] + lane; j < end; j += lanes) sum += mul(values[j], b[col_idxs[j] * k + c]);
        }
        sum = segment_sum(tmp, sum, lid, lanes);
        if (lane == 0 && row < n) {
            const int i = row * k + c;
            y[i] = sum;
            du += mul_conj(u[i], sum);
            dw += mul_conj(W_AT(i, sum), sum);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    write_dots(du, dw, tmp, k, c, get_group_id(0), partial);
}

// Row blocks whose bounds are all row ends (no row split over blocks): work-item g alone
// takes block g; its work-group is itself (partial sums per block).
__kernel void spmv_row_blocks_dots(DOTS_PARAMS, const int parts,
                                   __global const index_type* restrict bounds)
{
    const int g = get_global_id(0);
    const int c = get_global_id(1);
    if (g >= parts) return;
    const int row_end = bounds[2 * g + 3];
    int j = bounds[2 * g] - bounds[2 * g + 1];
    value_type du = 0, dw = 0;
    for (int row = bounds[2 * g + 1]; row < row_end; ++row) {
        value_type sum = 0;
        const int end = row_ptrs[row + 1];
        for (; j < end; ++j) sum += mul(values[j], b[col_idxs[j] * k + c]);
        const int i = row * k + c;
        y[i] = sum;
        du += mul_conj(u[i], sum);
        dw += mul_conj(W_AT(i, sum), sum);
    }
    const int count = (1 + TWO) * k;
    partial[g * count + c] = du;
#if TWO
    partial[g * count + k + c] = dw;
#endif
}

// out[j] = values[j] diag[col_idxs[j]]: A D with D = diag(diag)
__kernel void scale_columns(const int nnz, __global const index_type* restrict col_idxs,
                            __global const value_type* restrict values,
                            __global const value_type* restrict diag, __global value_type* restrict out)
{
    const int j = get_global_id(0);
    if (j < nnz) out[j] = mul(values[j], diag[col_idxs[j]]);
}

// ---- permutation and scaling ---------------------------------------------------------------

#ifndef ROWS  // permute: a row index array is given (else the rows stay)
#define ROWS 0
#endif
#ifndef COLS  // permute: a column renumbering is given (else the columns stay)
#define COLS 0
#endif

// out[i] = length of row rows[i] (i < n), out[n] = 0: the counts the prefix sum turns into row pointers
__kernel void permuted_row_lengths(const int n, __global const int* rows, __global const int* row_ptrs,
                                   __global int* out)
{
    const int i = get_global_id(0);
    if (i < n) {
        const int src = ROWS ? rows[i] : i;
        out[i] = row_ptrs[src + 1] - row_ptrs[src];
    } else if (i == n) {
        out[n] = 0;
    }
}

// row i of the result = row rows[i] of A with column c renumbered col_inverse[c], sorted by
// column (insertion sort in place: rows are short); one work-item per row
__kernel void permute_rows(const int n, __global const int* rows, __global const int* col_inverse,
                           __global const int* row_ptrs, __global const int* col_idxs,
                           __global const value_type* values, __global const int* out_ptrs,
                           __global int* out_cols, __global value_type* out_values)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int src = ROWS ? rows[i] : i;
    const int begin = row_ptrs[src], len = row_ptrs[src + 1] - begin, out = out_ptrs[i];
    for (int p = 0; p < len; ++p) {
        const int c = col_idxs[begin + p];
        out_cols[out + p] = COLS ? col_inverse[c] : c;
        out_values[out + p] = values[begin + p];
    }
#if COLS
    for (int p = 1; p < len; ++p) {
        const int c = out_cols[out + p];
        const value_type v = out_values[out + p];
        int q = p - 1;
        while (q >= 0 && out_cols[out + q] > c) {
            out_cols[out + q + 1] = out_cols[out + q];
            out_values[out + q + 1] = out_values[out + q];
            --q;
        }
        out_cols[out + q + 1] = c;
        out_values[out + q + 1] = v;
    }
#endif
}

// out (the values of D A) = values times diag[i] in row i; one work-item per row
__kernel void scale_rows(const int n, __global const index_type* restrict row_ptrs,
                         __global const value_type* restrict values,
                         __global const value_type* restrict diag, __global value_type* restrict out)
{
    const int i = get_global_id(0);
    if (i < n) {
        const value_type d = diag[i];
        for (int p = row_ptrs[i]; p < row_ptrs[i + 1]; ++p) out[p] = mul(values[p], d);
    }
}
