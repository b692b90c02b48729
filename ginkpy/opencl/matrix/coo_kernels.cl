// SpMV of Coo without atomics: x[:, j] += alpha_j (A b)[:, j] as a segmented reduction over
// the row-sorted entries, in two launches.
//
// Phase 1 (chunks): each work-group takes WORK_GROUP consecutive entries, one per work-item,
// and runs a segmented inclusive scan of the products in local memory. A row that lies
// entirely inside the chunk (neither its first nor its last row) has no entries in any other
// chunk, so the last work-item of its segment adds it to x directly. The chunk's first and last
// rows may continue in the neighbouring chunks: their partial sums go to two carries per
// work-group (carry 2g: first row; carry 2g + 1: last row, value 0 when the chunk holds one row).
// Phase 2 (carries): the carries are sorted by row too; the first carry of each row sums the
// carries of its row and adds the total to x.
//
// WORK_GROUP comes from the build options. Work-items past the last entry repeat the last
// entry's row with product 0, so they extend the last segment instead of branching.
#include "common.cl"

inline void chunk_sums(const int nnz, const int k, __global const index_type* row_idxs,
                       __global const index_type* col_idxs, __global const value_type* values,
                       __global const value_type* b, __global value_type* x,
                       __global index_type* carry_rows, __global value_type* carry_vals,
                       const value_type alpha, __local index_type* rows, __local value_type* sums)
{
    const int t = get_local_id(0), g = get_group_id(0), j = get_global_id(1);
    const int i = get_global_id(0);
    const int entry = min(i, nnz - 1);
    const index_type row = row_idxs[entry];
    const value_type product = values[entry] * b[col_idxs[entry] * k + j];
    rows[t] = row;
    sums[t] = i < nnz ? product : (value_type)0;
    // segmented inclusive scan: sums[t] = sum of the products of `row` in this chunk up to t
    for (int offset = 1; offset < WORK_GROUP; offset *= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int src = max(t - offset, 0);
        const value_type add = (t >= offset && rows[src] == row) ? sums[src] : (value_type)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[t] += add;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const index_type first = rows[0], last = rows[WORK_GROUP - 1];
    const bool segment_end = t == WORK_GROUP - 1 || rows[min(t + 1, WORK_GROUP - 1)] != row;
    if (segment_end && row != first && row != last) {
        x[row * k + j] += alpha * sums[t];
    }
    if (segment_end && row == first) {
        if (j == 0) carry_rows[2 * g] = first;
        carry_vals[2 * g * k + j] = sums[t];
    }
    if (t == WORK_GROUP - 1) {
        if (j == 0) carry_rows[2 * g + 1] = last;
        carry_vals[(2 * g + 1) * k + j] = first != last ? sums[t] : (value_type)0;
    }
}

inline void carry_sums(const int num_carries, const int k, __global const index_type* carry_rows,
                       __global const value_type* carry_vals, __global value_type* x,
                       const value_type alpha)
{
    const int c = get_global_id(0), j = get_global_id(1);
    // only the first carry of each row adds its row's carries
    if (c < num_carries && (c == 0 || carry_rows[c - 1] != carry_rows[c])) {
        const index_type row = carry_rows[c];
        value_type sum = 0;
        for (int d = c; d < num_carries && carry_rows[d] == row; ++d) {
            sum += carry_vals[d * k + j];
        }
        x[row * k + j] += alpha * sum;
    }
}

// x = x + A b, phase 1
__kernel void spmv2_chunks(const int nnz, const int k, __global const index_type* row_idxs,
                           __global const index_type* col_idxs, __global const value_type* values,
                           __global const value_type* b, __global value_type* x,
                           __global index_type* carry_rows, __global value_type* carry_vals)
{
    __local index_type rows[WORK_GROUP];
    __local value_type sums[WORK_GROUP];
    chunk_sums(nnz, k, row_idxs, col_idxs, values, b, x, carry_rows, carry_vals, 1, rows, sums);
}

// x = x + A b, phase 2
__kernel void spmv2_carries(const int num_carries, const int k, __global const index_type* carry_rows,
                            __global const value_type* carry_vals, __global value_type* x)
{
    carry_sums(num_carries, k, carry_rows, carry_vals, x, 1);
}

// x = x + alpha A b, phase 1; alpha is read at j * alpha_stride (stride 0: one for all columns)
__kernel void advanced_spmv2_chunks(const int nnz, const int k, __global const index_type* row_idxs,
                                    __global const index_type* col_idxs,
                                    __global const value_type* values, __global const value_type* b,
                                    __global value_type* x, __global index_type* carry_rows,
                                    __global value_type* carry_vals, __global const value_type* alpha,
                                    const int alpha_stride)
{
    __local index_type rows[WORK_GROUP];
    __local value_type sums[WORK_GROUP];
    chunk_sums(nnz, k, row_idxs, col_idxs, values, b, x, carry_rows, carry_vals,
               alpha[get_global_id(1) * alpha_stride], rows, sums);
}

// x = x + alpha A b, phase 2
__kernel void advanced_spmv2_carries(const int num_carries, const int k,
                                     __global const index_type* carry_rows,
                                     __global const value_type* carry_vals, __global value_type* x,
                                     __global const value_type* alpha, const int alpha_stride)
{
    carry_sums(num_carries, k, carry_rows, carry_vals, x, alpha[get_global_id(1) * alpha_stride]);
}
