// SpMV of Coo without atomics: x[:, j] += alpha_j (A b)[:, j] as a segmented reduction over
// the row-sorted entries, in two launches.
//
// Phase 1 (chunks): each work-group takes a tile of TILE = WORK_GROUP * ITEMS consecutive
// entries, loaded coalesced into local memory; each work-item then sums ITEMS consecutive
// entries serially, and a segmented scan over the work-items joins rows that cross work-items.
// A row that lies entirely inside the tile (neither its first nor its last row) has no entries
// in any other tile, so the one work-item where it ends adds it to x directly. The tile's first
// and last rows may continue in the neighbouring tiles: their partial sums go to two carries per
// work-group (carry 2g: first row; carry 2g + 1: last row, value 0 when the tile holds one row).
// Phase 2 (carries): the carries are sorted by row too; the first carry of each row sums the
// carries of its row and adds the total to x.
//
// WORK_GROUP and ITEMS come from the build options. Entries past the last one repeat the last
// entry's row with product 0, so they extend the last segment instead of branching.
#include "common.cl"

#define TILE (WORK_GROUP * ITEMS)

// The sum `total` of `row` ends in this work-item: a carry if the row is the tile's first or
// last, else straight into x.
inline void finish_row(const index_type row, const value_type total, const index_type tile_first,
                       const index_type tile_last, const int k, const value_type alpha,
                       __global value_type* x, __global index_type* carry_rows,
                       __global value_type* carry_vals)
{
    const int g = get_group_id(0), j = get_global_id(1);
    if (row == tile_first) {
        if (j == 0) carry_rows[2 * g] = row;
        carry_vals[2 * g * k + j] = total;
    } else if (row == tile_last) {
        carry_vals[(2 * g + 1) * k + j] = total;
    } else {
        x[row * k + j] += mul(alpha, total);
    }
}

inline void chunk_sums(const int nnz, const int k, __global const index_type* row_idxs,
                       __global const index_type* col_idxs, __global const value_type* values,
                       __global const value_type* b, __global value_type* x,
                       __global index_type* carry_rows, __global value_type* carry_vals,
                       const value_type alpha, __local index_type* rows, __local value_type* products,
                       __local index_type* last_rows, __local value_type* last_sums)
{
    const int t = get_local_id(0), g = get_group_id(0), j = get_global_id(1);
    // coalesced load of the tile's rows and products
    for (int s = 0; s < ITEMS; ++s) {
        const int i = g * TILE + s * WORK_GROUP + t;
        const int entry = min(i, nnz - 1);
        const value_type product = mul(values[entry], b[col_idxs[entry] * k + j]);
        rows[s * WORK_GROUP + t] = row_idxs[entry];
        products[s * WORK_GROUP + t] = i < nnz ? product : (value_type)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const index_type tile_first = rows[0], tile_last = rows[TILE - 1];
    // serial sum of this work-item's ITEMS entries; rows that begin and end inside it go to x
    const int begin = t * ITEMS;
    const index_type first_row = rows[begin];
    index_type row = first_row;
    value_type sum = 0, first_sum = 0;
    for (int s = begin; s < begin + ITEMS; ++s) {
        if (rows[s] != row) {
            if (row == first_row) {
                first_sum = sum;
            } else {
                x[row * k + j] += mul(alpha, sum);
            }
            row = rows[s];
            sum = 0;
        }
        sum += products[s];
    }
    // segmented inclusive scan over the work-items of their last rows' sums: afterwards
    // last_sums[t] = sum of `row` from its start in the tile to the end of work-item t
    last_rows[t] = row;
    last_sums[t] = sum;
    for (int offset = 1; offset < WORK_GROUP; offset *= 2) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int src = max(t - offset, 0);
        const value_type add = (t >= offset && last_rows[src] == row) ? last_sums[src] : (value_type)0;
        barrier(CLK_LOCAL_MEM_FENCE);
        last_sums[t] += add;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (first_row != row) {
        // the first row ends here: add what the previous work-items hold of it
        const value_type before = (t > 0 && last_rows[t - 1] == first_row) ? last_sums[t - 1] : (value_type)0;
        finish_row(first_row, first_sum + before, tile_first, tile_last, k, alpha, x, carry_rows, carry_vals);
    }
    if (t == WORK_GROUP - 1 || rows[begin + ITEMS] != row) {
        // the last row does not continue into the next work-item
        finish_row(row, last_sums[t], tile_first, tile_last, k, alpha, x, carry_rows, carry_vals);
    }
    if (t == WORK_GROUP - 1) {
        if (j == 0) carry_rows[2 * g + 1] = tile_last;
        if (tile_first == tile_last) carry_vals[(2 * g + 1) * k + j] = 0;
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
        x[row * k + j] += mul(alpha, sum);
    }
}

// x = x + A b, phase 1
__kernel void spmv2_chunks(const int nnz, const int k, __global const index_type* row_idxs,
                           __global const index_type* col_idxs, __global const value_type* values,
                           __global const value_type* b, __global value_type* x,
                           __global index_type* carry_rows, __global value_type* carry_vals)
{
    __local index_type rows[TILE], last_rows[WORK_GROUP];
    __local value_type products[TILE], last_sums[WORK_GROUP];
    chunk_sums(nnz, k, row_idxs, col_idxs, values, b, x, carry_rows, carry_vals, to_value(1), rows,
               products, last_rows, last_sums);
}

// x = x + A b, phase 2
__kernel void spmv2_carries(const int num_carries, const int k, __global const index_type* carry_rows,
                            __global const value_type* carry_vals, __global value_type* x)
{
    carry_sums(num_carries, k, carry_rows, carry_vals, x, to_value(1));
}

// x = x + alpha A b, phase 1; alpha is read at j * alpha_stride (stride 0: one for all columns)
__kernel void advanced_spmv2_chunks(const int nnz, const int k, __global const index_type* row_idxs,
                                    __global const index_type* col_idxs,
                                    __global const value_type* values, __global const value_type* b,
                                    __global value_type* x, __global index_type* carry_rows,
                                    __global value_type* carry_vals, __global const value_type* alpha,
                                    const int alpha_stride)
{
    __local index_type rows[TILE], last_rows[WORK_GROUP];
    __local value_type products[TILE], last_sums[WORK_GROUP];
    chunk_sums(nnz, k, row_idxs, col_idxs, values, b, x, carry_rows, carry_vals,
               alpha[get_global_id(1) * alpha_stride], rows, products, last_rows, last_sums);
}

// x = x + alpha A b, phase 2
__kernel void advanced_spmv2_carries(const int num_carries, const int k,
                                     __global const index_type* carry_rows,
                                     __global const value_type* carry_vals, __global value_type* x,
                                     __global const value_type* alpha, const int alpha_stride)
{
    carry_sums(num_carries, k, carry_rows, carry_vals, x, alpha[get_global_id(1) * alpha_stride]);
}
