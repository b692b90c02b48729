// Diagonal blocks of CSR items inverted (what Jacobi and the batch Jacobi share; twin:
// reference/components/diagonal_blocks.py). Block g = item * num_blocks + b covers rows and
// columns block_ptrs[b] .. block_ptrs[b + 1] - 1 of item `item` (values at item * nnz).
//
// Each block D is equilibrated, E = R D C (rows, then columns, to a largest entry of 1), and
// E^T is inverted in place by Gauss-Jordan elimination with partial pivoting (row swaps, the
// columns unscrambled at the end). Working on T = D^T gives (D^-1)^T = R (E^-1)^T C, which is
// the stored layout: blocks[g * STRIDE^2 + j * STRIDE + r] = entry (r, j) of D^-1, padding 0.
// A block is singular when E has a zero row or column or a zero pivot, when
// 1 / (|E|_1 |E^-1|_1) < epsilon, or when D^-1 is not finite; conditioning[g] = |D|_1 |D^-1|_1
// (infinite where singular), and bad[0] = the first singular g (atomic_min), bad[1] = how many.
// The blocks of item 0 also write row_blocks (the block of each row).
//
// STRIDE (the largest block) is a compile-time constant. invert_blocks_item (CPU devices): one
// work-item inverts one block in place in its output slot, no barriers. invert_blocks_group
// (GPUs): STRIDE work-items per block, BLOCKS_PER_GROUP blocks per work-group, the block in
// local memory; a lane owns a column of T while it loads, swaps and normalizes the pivot row,
// and a row while it eliminates.
#include "common.cl"

inline void report(__global real_type* conditioning, __global int* bad, const int g, const bool singular,
                   const real_type norm_d, const real_type norm_e, const real_type norm_einv,
                   const real_type norm_dinv)
{
    // rcond(E) = 1 / (|E|_1 |E^-1|_1) below epsilon (or not a number): singular to working precision
    const bool bad_block = singular || !(norm_e * norm_einv * EPSILON <= 1) || !isfinite(norm_dinv);
    conditioning[g] = bad_block ? INFINITY : norm_d * norm_dinv;
    if (bad_block) {
        atomic_min(bad, g);
        atomic_inc(bad + 1);
    }
}

#define T(j, r) w[(j) * STRIDE + (r)]

__kernel void invert_blocks_item(const int total, const int num_blocks, const int nnz,
                                 __global const int* row_ptrs, __global const int* col_idxs,
                                 __global const value_type* values, __global const int* block_ptrs,
                                 __global value_type* blocks, __global int* row_blocks,
                                 __global real_type* conditioning, __global int* bad)
{
    const int g = get_global_id(0);
    if (g >= total) return;
    const int item = g / num_blocks;
    const int b = g - item * num_blocks;
    const int start = block_ptrs[b];
    const int size = block_ptrs[b + 1] - start;
    __global const value_type* v = values + (size_t)item * nnz;
#if STRIDE == 1
    // scalar Jacobi: the equilibrated 1 x 1 block is d / |d|, so only d = 0 (or 1 / d beyond
    // the value type's range) is singular, and |D|_1 |D^-1|_1 = 1
    if (item == 0) row_blocks[start] = b;
    value_type d = 0;
    for (int e = row_ptrs[start]; e < row_ptrs[start + 1]; ++e) {
        if (col_idxs[e] == start) d = v[e];
    }
    const value_type inverse = divide(to_value(1), d);
    const bool bad_block = is_zero(d) || !is_finite_value(inverse);
    blocks[g] = inverse;
    conditioning[g] = bad_block ? INFINITY : 1;
    if (bad_block) {
        atomic_min(bad, g);
        atomic_inc(bad + 1);
    }
    return;
#endif
    // T = D^T in private memory, identity padding: rows of STRIDE entries, whole rows updated
    // (a row inside the block has zeros in the padding columns) in loops the compiler unrolls
    value_type w[STRIDE * STRIDE];
    value_type pivot_row[STRIDE];
    for (int i = 0; i < STRIDE * STRIDE; ++i) w[i] = to_value(0);
    for (int i = size; i < STRIDE; ++i) T(i, i) = to_value(1);
    for (int r = 0; r < size; ++r) {
        if (item == 0) row_blocks[start + r] = b;
        for (int e = row_ptrs[start + r]; e < row_ptrs[start + r + 1]; ++e) {
            const int c = col_idxs[e] - start;
            if (c >= 0 && c < size) T(c, r) = v[e];
        }
    }
    real_type rs[STRIDE], cs[STRIDE];  // R (D's rows: T's columns), C (D's columns: T's rows)
    int perm[STRIDE];
    bool singular = false;
    real_type norm_d = 0, norm_e = 0, norm_einv = 0, norm_dinv = 0;
    for (int r = 0; r < STRIDE; ++r) rs[r] = 0;
    for (int j = 0; j < size; ++j) {
        real_type sum = 0;  // |D|_1: T's largest row sum
        for (int r = 0; r < size; ++r) {
            const real_type a = abs_value(T(j, r));
            sum += a;
            rs[r] = fmax(rs[r], a);
        }
        norm_d = fmax(norm_d, sum);
    }
    for (int r = 0; r < STRIDE; ++r) {
        singular |= r < size && rs[r] == 0;
        rs[r] = rs[r] == 0 ? 1 : 1 / rs[r];
    }
    // E^T = C T R
    for (int j = 0; j < size; ++j) {
        real_type big = 0;
        for (int r = 0; r < size; ++r) {
            T(j, r) = T(j, r) * rs[r];
            big = fmax(big, abs_value(T(j, r)));
        }
        singular |= big == 0;
        cs[j] = big == 0 ? 1 : 1 / big;
        real_type sum = 0;
        for (int r = 0; r < size; ++r) {
            T(j, r) = T(j, r) * cs[j];
            sum += abs_value(T(j, r));
        }
        norm_e = fmax(norm_e, sum);
    }
    for (int j = size; j < STRIDE; ++j) cs[j] = 1;
    // Gauss-Jordan: T <- T^-1
    for (int k = 0; k < size && !singular; ++k) {
        int p = k;
        real_type best = abs_value(T(k, k));
        for (int i = k + 1; i < size; ++i) {
            const real_type a = abs_value(T(i, k));
            if (a > best) {
                best = a;
                p = i;
            }
        }
        if (best == 0) {
            singular = true;
            break;
        }
        perm[k] = p;
        // the pivot row, divided by the pivot, to row k (row p gets row k)
        const value_type inv = divide(to_value(1), T(p, k));
        for (int j = 0; j < STRIDE; ++j) {
            const value_type row_p = T(p, j);
            T(p, j) = T(k, j);
            pivot_row[j] = j == k ? inv : mul(row_p, inv);
        }
        for (int j = 0; j < STRIDE; ++j) T(k, j) = pivot_row[j];
        for (int i = 0; i < size; ++i) {
            const value_type f = T(i, k);
            if (i == k || is_zero(f)) continue;  // sparse blocks: many rows have nothing to eliminate
            T(i, k) = to_value(0);
            for (int j = 0; j < STRIDE; ++j) T(i, j) -= mul(f, pivot_row[j]);
        }
    }
    if (!singular) {
        for (int k = size - 1; k >= 0; --k) {
            const int p = perm[k];
            if (p == k) continue;
            for (int i = 0; i < size; ++i) {
                const value_type tmp = T(i, k);
                T(i, k) = T(i, p);
                T(i, p) = tmp;
            }
        }
    }
    // (D^-1)^T = R (E^-1)^T C, written out with zero padding
    __global value_type* t = blocks + (size_t)g * STRIDE * STRIDE;
    for (int j = 0; j < STRIDE; ++j) {
        real_type sum_einv = 0, sum_dinv = 0;
        for (int r = 0; r < STRIDE; ++r) {
            const bool inside = j < size && r < size;
            const value_type e = inside ? T(j, r) : to_value(0);
            const value_type d = e * (rs[j] * cs[r]);
            sum_einv += abs_value(e);
            sum_dinv += abs_value(d);
            t[j * STRIDE + r] = d;
        }
        norm_einv = fmax(norm_einv, sum_einv);
        norm_dinv = fmax(norm_dinv, sum_dinv);
        singular |= !isfinite(sum_dinv);
    }
    report(conditioning, bad, g, singular, norm_d, norm_e, norm_einv, norm_dinv);
}

#undef T

#ifdef BLOCKS_PER_GROUP

#define TILE (STRIDE * (STRIDE + 1))
#define T(j, r) tile[(j) * (STRIDE + 1) + (r)]

__kernel void invert_blocks_group(const int total, const int num_blocks, const int nnz,
                                  __global const int* row_ptrs, __global const int* col_idxs,
                                  __global const value_type* values, __global const int* block_ptrs,
                                  __global value_type* blocks, __global int* row_blocks,
                                  __global real_type* conditioning, __global int* bad)
{
    __local value_type tiles[BLOCKS_PER_GROUP * TILE];
    __local real_type scales[BLOCKS_PER_GROUP * 2 * STRIDE];  // rs, cs
    __local real_type sums[BLOCKS_PER_GROUP * 4 * STRIDE];    // row sums of T, E^T, (E^-1)^T, (D^-1)^T
    __local int perms[BLOCKS_PER_GROUP * STRIDE];
    __local int flags[BLOCKS_PER_GROUP];                      // a zero row, column or pivot, not finite
    const int lane = get_local_id(0) % STRIDE;
    const int slot = get_local_id(0) / STRIDE;
    const int g = get_group_id(0) * BLOCKS_PER_GROUP + slot;
    const bool valid = g < total;
    const int item = valid ? g / num_blocks : 0;
    const int b = valid ? g - item * num_blocks : 0;
    const int start = valid ? block_ptrs[b] : 0;
    const int size = valid ? block_ptrs[b + 1] - start : 0;
    __local value_type* tile = tiles + slot * TILE;
    __local real_type* rs = scales + slot * 2 * STRIDE;
    __local real_type* cs = rs + STRIDE;
    __local real_type* sum = sums + slot * 4 * STRIDE;
    __local int* perm = perms + slot * STRIDE;
    // lane owns column `lane` of T = D^T (row `lane` of D), identity padding
    for (int j = 0; j < STRIDE; ++j) T(j, lane) = to_value(j == lane && lane >= size ? 1 : 0);
    if (lane == 0) flags[slot] = 0;
    if (lane < size) {
        if (item == 0) row_blocks[start + lane] = b;
        __global const value_type* v = values + (size_t)item * nnz;
        for (int e = row_ptrs[start + lane]; e < row_ptrs[start + lane + 1]; ++e) {
            const int c = col_idxs[e] - start;
            if (c >= 0 && c < size) T(c, lane) = v[e];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // |D|_1 parts (T's row sums) and R (D's row maxima: T's column maxima)
    {
        real_type row = 0, column = 0;
        for (int r = 0; r < size; ++r) row += abs_value(T(lane, r));
        for (int j = 0; j < size; ++j) column = fmax(column, abs_value(T(j, lane)));
        sum[lane] = lane < size ? row : 0;
        if (lane < size && column == 0) flags[slot] = 1;
        rs[lane] = column == 0 ? 1 : 1 / column;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = 0; j < size; ++j) T(j, lane) = T(j, lane) * rs[lane];
    barrier(CLK_LOCAL_MEM_FENCE);
    // C (the scaled D's column maxima: T's row maxima), E^T = C T R, |E|_1 parts
    {
        real_type big = 0, row = 0;
        for (int r = 0; r < size; ++r) big = fmax(big, abs_value(T(lane, r)));
        if (lane < size && big == 0) flags[slot] = 1;
        const real_type c = big == 0 ? 1 : 1 / big;
        cs[lane] = c;
        for (int r = 0; r < size; ++r) {
            T(lane, r) = T(lane, r) * c;
            row += abs_value(T(lane, r));
        }
        sum[STRIDE + lane] = lane < size ? row : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Gauss-Jordan: T <- T^-1 (the same pivot found by every lane of the block)
    bool failed = flags[slot] != 0;
    for (int k = 0; k < STRIDE; ++k) {
        const bool step = k < size && !failed;
        int p = k;
        value_type pivot = to_value(0);
        if (step) {
            real_type best = -1;
            for (int i = k; i < size; ++i) {
                const real_type a = abs_value(T(i, k));
                if (a > best) {
                    best = a;
                    p = i;
                }
            }
            pivot = T(p, k);
            failed = best == 0;
        }
        const bool active = step && !failed;
        barrier(CLK_LOCAL_MEM_FENCE);
        // lane's column: swap rows k and p, row k divided by the pivot
        if (active) {
            const value_type inv = divide(to_value(1), pivot);
            const value_type rk = T(k, lane), rp = T(p, lane);
            if (p != k) T(p, lane) = rk;
            T(k, lane) = lane == k ? inv : mul(rp, inv);
            if (lane == 0) perm[k] = p;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        // lane's row: eliminate column k
        if (active && lane < size && lane != k) {
            const value_type f = T(lane, k);
            T(lane, k) = to_value(0);
            for (int j = 0; j < size; ++j) T(lane, j) -= mul(f, T(k, j));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    // lane's row: the columns unscrambled, then (D^-1)^T = R (E^-1)^T C
    if (lane < size) {
        if (!failed) {
            for (int k = size - 1; k >= 0; --k) {
                const int p = perm[k];
                if (p != k) {
                    const value_type tmp = T(lane, k);
                    T(lane, k) = T(lane, p);
                    T(lane, p) = tmp;
                }
            }
        }
        real_type sum_einv = 0, sum_dinv = 0;
        for (int r = 0; r < size; ++r) {
            sum_einv += abs_value(T(lane, r));
            T(lane, r) = T(lane, r) * (rs[lane] * cs[r]);
            sum_dinv += abs_value(T(lane, r));
        }
        sum[2 * STRIDE + lane] = sum_einv;
        sum[3 * STRIDE + lane] = sum_dinv;
    } else {
        sum[2 * STRIDE + lane] = 0;
        sum[3 * STRIDE + lane] = 0;
    }
    if (failed && lane == 0) flags[slot] = 1;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (valid && lane == 0) {
        real_type norm[4] = {0, 0, 0, 0};
        for (int q = 0; q < 4; ++q) {
            for (int l = 0; l < size; ++l) norm[q] = fmax(norm[q], sum[q * STRIDE + l]);
        }
        // a row sum that is not finite (fmax drops NaN): D^-1 is not finite
        bool finite = true;
        for (int l = 0; l < size; ++l) finite &= isfinite(sum[3 * STRIDE + l]);
        report(conditioning, bad, g, flags[slot] != 0 || !finite, norm[0], norm[1], norm[2], norm[3]);
    }
    // lane's column of the stored block: coalesced writes
    if (valid) {
        __global value_type* out = blocks + (size_t)g * STRIDE * STRIDE;
        for (int j = 0; j < STRIDE; ++j) out[j * STRIDE + lane] = j < size && lane < size ? T(j, lane) : to_value(0);
    }
}

#endif
