// Kernels of Multigrid's cycle (see reference/solver/multigrid_kernels.py). Vectors are n x k,
// row-major; one work-item per entry (row or aggregate, column c). Each step is an inline
// function of one entry, shared by its own kernel and by coarse_cycle, which runs the steps of
// the coarse levels one after another in one work-group.
#include "common.cl"

// a level's matrix (CSR) and its aggregates' rows (pointers, rows)
#define MATRIX_PARAMS                                                                            \
    __global const index_type* restrict row_ptrs, __global const index_type* restrict col_idxs, \
    __global const value_type* restrict values
#define AGGREGATE_PARAMS __global const index_type* restrict agg_ptrs, __global const index_type* restrict agg_rows

// (b - A x)[row, c]
inline value_type residual_at(MATRIX_PARAMS,
                              __global const value_type* b, __global const value_type* x,
                              const int row, const int k, const int c)
{
    value_type ax = 0;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) ax += mul(values[e], x[col_idxs[e] * k + c]);
    return b[row * k + c] - ax;
}

// coarse_b[I, c] = sum over the rows i of aggregate I (in agg_rows order) of (b - A x)[i, c]
inline void restrict_residual_at(MATRIX_PARAMS,
                                 AGGREGATE_PARAMS,
                                 __global const value_type* b, __global const value_type* x,
                                 __global value_type* coarse_b, const int I, const int k, const int c)
{
    value_type sum = 0;
    for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
        sum += residual_at(row_ptrs, col_idxs, values, b, x, agg_rows[p], k, c);
    }
    coarse_b[I * k + c] = sum;
}

// The first weighted Jacobi step from x = 0 on the rows of aggregate I and the restriction of
// the residual after it: x = beta D^-1 b (the neighbours' values formed from b on the fly);
// coarse_b[I, c] = sum over the rows i of I of (b - A x)[i, c]
inline void relax_first_restrict_at(const real_type beta,
                                    MATRIX_PARAMS,
                                    __global const value_type* restrict inv_diag,
                                    AGGREGATE_PARAMS,
                                    __global const value_type* b, __global value_type* x,
                                    __global value_type* coarse_b, const int I, const int k, const int c)
{
    value_type sum = 0;
    for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) {
        const int row = agg_rows[p];
        value_type ax = 0;
        for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
            const int col = col_idxs[e];
            ax += mul(values[e], mul(inv_diag[col], b[col * k + c]));
        }
        const value_type bi = b[row * k + c];
        x[row * k + c] = beta * mul(inv_diag[row], bi);
        sum += bi - beta * ax;
    }
    coarse_b[I * k + c] = sum;
}

// x_new = x + beta D^-1 (b - A x) at (row, c)
inline void relax_at(const real_type beta, MATRIX_PARAMS,
                     __global const value_type* restrict inv_diag, __global const value_type* b,
                     __global const value_type* x, __global value_type* x_new, const int row,
                     const int k, const int c)
{
    const value_type r = residual_at(row_ptrs, col_idxs, values, b, x, row, k, c);
    x_new[row * k + c] = x[row * k + c] + beta * mul(inv_diag[row], r);
}

// y = x + P e read on the fly; x_new = y + beta D^-1 (b - A y) at (row, c)
inline void prolong_relax_at(const real_type beta, MATRIX_PARAMS,
                             __global const value_type* restrict inv_diag,
                             __global const index_type* restrict agg,
                             __global const value_type* coarse_x, __global const value_type* b,
                             __global const value_type* x, __global value_type* x_new,
                             const int row, const int k, const int c)
{
    value_type ay = 0;
    for (int e = row_ptrs[row]; e < row_ptrs[row + 1]; e++) {
        const int col = col_idxs[e];
        ay += mul(values[e], x[col * k + c] + coarse_x[agg[col] * k + c]);
    }
    const int idx = row * k + c;
    const value_type y = x[idx] + coarse_x[agg[row] * k + c];
    x_new[idx] = y + beta * mul(inv_diag[row], b[idx] - ay);
}

__kernel void restrict_residual(const int size, const int k, MATRIX_PARAMS,
                                AGGREGATE_PARAMS,
                                __global const value_type* restrict b,
                                __global const value_type* restrict x,
                                __global value_type* restrict coarse_b)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    restrict_residual_at(row_ptrs, col_idxs, values, agg_ptrs, agg_rows, b, x, coarse_b,
                         k == 1 ? idx : idx / k, k, COLUMN(idx, k));
}

// coarse_b[I, c] = sum over the rows i of aggregate I (in agg_rows order) of r[i, c]: the
// restriction of a residual computed row by row before (on a GPU, reading the rows of a large
// level in order beats a work-item per aggregate walking its rows' entries scattered)
__kernel void aggregate_sums(const int size, const int k, AGGREGATE_PARAMS,
                             __global const value_type* restrict r, __global value_type* restrict coarse_b)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const int I = k == 1 ? idx : idx / k, c = COLUMN(idx, k);
    value_type sum = 0;
    for (int p = agg_ptrs[I]; p < agg_ptrs[I + 1]; p++) sum += r[agg_rows[p] * k + c];
    coarse_b[idx] = sum;
}

__kernel void relax_first_restrict(const int size, const int k, const real_type beta,
                                   MATRIX_PARAMS,
                                   __global const value_type* restrict inv_diag,
                                   AGGREGATE_PARAMS,
                                   __global const value_type* restrict b,
                                   __global value_type* restrict x,
                                   __global value_type* restrict coarse_b)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    relax_first_restrict_at(beta, row_ptrs, col_idxs, values, inv_diag, agg_ptrs, agg_rows, b, x, coarse_b,
                            k == 1 ? idx : idx / k, k, COLUMN(idx, k));
}

// x[i, c] += coarse_x[agg[i], c]
__kernel void prolong(const int size, const int k, __global const index_type* restrict agg,
                      __global const value_type* restrict coarse_x, __global value_type* restrict x)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const int row = k == 1 ? idx : idx / k;
    x[idx] += coarse_x[agg[row] * k + COLUMN(idx, k)];
}

__kernel void prolong_relax(const int size, const int k, const real_type beta,
                            MATRIX_PARAMS,
                            __global const value_type* restrict inv_diag,
                            __global const index_type* restrict agg,
                            __global const value_type* restrict coarse_x,
                            __global const value_type* restrict b,
                            __global const value_type* restrict x,
                            __global value_type* restrict x_new)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    prolong_relax_at(beta, row_ptrs, col_idxs, values, inv_diag, agg, coarse_x, b, x, x_new,
                     k == 1 ? idx : idx / k, k, COLUMN(idx, k));
}

// -- the coarse levels in one work-group ---------------------------------------------------------
// The levels t = 0, 1, ... of the merged part (t = 0 its finest, the last its coarsest) are
// packed into shared arrays; meta holds per level t: rows n, and the offsets of its row
// pointers, its entries, its rows (inv_diag, agg, agg_rows), its aggregate pointers and its
// vectors (b, x0, x1: 3 n x k values in work). Level 0's b and x0 are the caller's b_top and
// x_top. The schedule is a list of steps (op, level, src, dst), each done by the whole
// work-group, then a barrier: src and dst name x0 or x1 of the level; the correction from
// the level below is always in its x0.
#define META 6
#define OP_RELAX_FIRST_RESTRICT 0  // x_dst = omega D^-1 b;  b of level t + 1 = P^T (b - A x_dst)
#define OP_RELAX 1                 // x_dst = x_src + omega D^-1 (b - A x_src)
#define OP_RESTRICT_RESIDUAL 2     // b of level t + 1 = P^T (b - A x_src)
#define OP_PROLONG_RELAX 3         // y = x_src + P x0 of level t + 1;  x_dst = y + omega D^-1 (b - A y)
#define OP_COARSEST 4              // x0 = A^-1 b (the dense inverse)
#define OP_RELAX_FIRST 5           // x_dst = omega D^-1 b
// (the same numbers as core/solver/multigrid.py)

inline __global value_type* level_vector(__global value_type* work, __global const int* meta, const int t,
                                         const int which, const int k, __global value_type* b_top,
                                         __global value_type* x_top)
{
    // which: 0 b, 1 x0, 2 x1
    if (t == 0 && which == 0) return b_top;
    if (t == 0 && which == 1) return x_top;
    return work + (meta[t * META + 5] + which * meta[t * META]) * k;
}

__kernel void coarse_cycle(const int k, const int steps, __global const int* restrict schedule,
                           __global const int* restrict meta,
                           MATRIX_PARAMS,
                           __global const value_type* restrict inv_diag,
                           __global const real_type* restrict omega,
                           __global const index_type* restrict agg,
                           AGGREGATE_PARAMS,
                           __global const value_type* restrict inverse, __global value_type* work,
                           __global value_type* b_top, __global value_type* x_top)
{
    const int lid = get_local_id(0), width = get_local_size(0);
    for (int s = 0; s < steps; s++) {
        const int op = schedule[4 * s], t = schedule[4 * s + 1];
        const int src = schedule[4 * s + 2], dst = schedule[4 * s + 3];
        __global const int* lv = meta + t * META;
        const int n = lv[0];
        __global const index_type* ptrs = row_ptrs + lv[1];
        __global const index_type* cols = col_idxs + lv[2];
        __global const value_type* vals = values + lv[2];
        __global const value_type* d = inv_diag + lv[3];
        __global const index_type* level_agg = agg + lv[3];
        __global const index_type* level_rows = agg_rows + lv[3];
        __global const index_type* level_agg_ptrs = agg_ptrs + lv[4];
        __global value_type* b = level_vector(work, meta, t, 0, k, b_top, x_top);
        __global value_type* x_src = level_vector(work, meta, t, 1 + src, k, b_top, x_top);
        __global value_type* x_dst = level_vector(work, meta, t, 1 + dst, k, b_top, x_top);
        const real_type w = omega[t];
        if (op == OP_COARSEST) {
            for (int idx = lid; idx < n * k; idx += width) {
                const int row = idx / k, c = idx % k;
                value_type sum = 0;
                for (int j = 0; j < n; j++) sum += mul(inverse[row * n + j], b[j * k + c]);
                x_src[idx] = sum;
            }
        } else if (op == OP_RELAX_FIRST) {
            for (int idx = lid; idx < n * k; idx += width) x_dst[idx] = w * mul(d[idx / k], b[idx]);
        } else if (op == OP_RELAX) {
            for (int idx = lid; idx < n * k; idx += width) {
                relax_at(w, ptrs, cols, vals, d, b, x_src, x_dst, idx / k, k, idx % k);
            }
        } else if (op == OP_PROLONG_RELAX) {
            __global const value_type* coarse_x = level_vector(work, meta, t + 1, 1, k, b_top, x_top);
            for (int idx = lid; idx < n * k; idx += width) {
                prolong_relax_at(w, ptrs, cols, vals, d, level_agg, coarse_x, b, x_src, x_dst, idx / k, k, idx % k);
            }
        } else {
            const int m = meta[(t + 1) * META];
            __global value_type* coarse_b = level_vector(work, meta, t + 1, 0, k, b_top, x_top);
            for (int idx = lid; idx < m * k; idx += width) {
                if (op == OP_RELAX_FIRST_RESTRICT) {
                    relax_first_restrict_at(w, ptrs, cols, vals, d, level_agg_ptrs, level_rows, b, x_dst,
                                            coarse_b, idx / k, k, idx % k);
                } else {
                    restrict_residual_at(ptrs, cols, vals, level_agg_ptrs, level_rows, b, x_src, coarse_b,
                                         idx / k, k, idx % k);
                }
            }
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}
