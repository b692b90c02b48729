// Kernels of Dense. A matrix is n x k row-major; entry (i, j) is at i * k + j.
// A scalar is 1 x 1 or 1 x k, read at j * alpha_stride (alpha_stride is 0 for one scalar
// shared by all columns).
#include "common.cl"

#ifndef CONJUGATE  // compute_dot and transpose: conjugate the first argument (set by their launches)
#define CONJUGATE 0
#endif

// ---- element-wise: one work-item per entry -------------------------------------------------

__kernel void fill(const int size, __global value_type* x, const value_type value)
{
    const int i = get_global_id(0);
    if (i < size) x[i] = value;
}

__kernel void scale(const int size, const int k, __global const value_type* alpha,
                    const int alpha_stride, __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] = mul(alpha[(COLUMN(i, k)) * alpha_stride], x[i]);
}

__kernel void add_scaled(const int size, const int k, __global const value_type* alpha,
                         const int alpha_stride, __global const value_type* b,
                         __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] += mul(alpha[(COLUMN(i, k)) * alpha_stride], b[i]);
}

__kernel void sub_scaled(const int size, const int k, __global const value_type* alpha,
                         const int alpha_stride, __global const value_type* b,
                         __global value_type* x)
{
    const int i = get_global_id(0);
    if (i < size) x[i] -= mul(alpha[(COLUMN(i, k)) * alpha_stride], b[i]);
}

// dst = src rounded to value_type (round to nearest even, as numpy's astype); a real src gives
// complex values of imaginary part 0
__kernel void convert_from_float(const int size, __global const float* src,
                                 __global value_type* dst)
{
    const int i = get_global_id(0);
    if (i < size) dst[i] = to_value((real_type)src[i]);
}

#if defined(cl_khr_fp64)
__kernel void convert_from_double(const int size, __global const double* src,
                                  __global value_type* dst)
{
    const int i = get_global_id(0);
    if (i < size) dst[i] = to_value((real_type)src[i]);
}
#endif

#if VALUE_COMPLEX
// dst = complex src in the other precision
__kernel void convert_from_float2(const int size, __global const float2* src,
                                  __global value_type* dst)
{
    const int i = get_global_id(0);
    if (i < size) dst[i] = (value_type)((real_type)src[i].x, (real_type)src[i].y);
}

#if defined(cl_khr_fp64)
__kernel void convert_from_double2(const int size, __global const double2* src,
                                   __global value_type* dst)
{
    const int i = get_global_id(0);
    if (i < size) dst[i] = (value_type)((real_type)src[i].x, (real_type)src[i].y);
}
#endif
#endif

// ---- column reductions: one partial sum per work-group, no atomics -------------------------
// In the reduction layout of common.cl; with one group per column block the partial is the sum.
// a^H b per column with CONJUGATE, else a^T b.
__kernel void compute_dot(REDUCTION_PARAMS, __global const value_type* a,
                         __global const value_type* b, __global value_type* partial,
                         __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    value_type s = 0;
    if (col < k) s = column_dot(a, b, begin, end, lanes, k, col, CONJUGATE);
    s = REDUCE_LANES(s, tmp);
    if (IS_LANE_ROOT) partial[group * k + col] = s;
}

// Block inner product a^H b (a: n x k, b: n x m) split over chunks of rows: work-item
// (j, i, g) sums rows [g chunk, (g + 1) chunk) of conj(a[:, i]) b[:, j] into partial[g][i][j]
// (the work-items of a group share the rows they read, through the cache); sum_rows adds the
// partials of the chunks.
__kernel void gram_partials(const int n, const int k, const int m, const int chunk,
                            __global const value_type* a, __global const value_type* b,
                            __global value_type* partial)
{
    const int j = get_global_id(0);
    const int i = get_global_id(1);
    const int g = get_global_id(2);
    if (i >= k || j >= m) return;
    const int begin = g * chunk;
    const int end = min(n, begin + chunk);
    value_type s = 0;
    for (int r = begin; r < end; ++r) s += mul_conj(a[r * k + i], b[r * m + j]);
    partial[(g * k + i) * m + j] = s;
}

// The same partials with one work-item per (column i of a, chunk g) summing all m columns of
// b at once (m <= GRAM_COLUMNS): a[r, i] is read once per row and b's row is shared by the
// group's work-items through the cache (a CPU device's choice).
#define GRAM_COLUMNS 32
__kernel void gram_partials_rows(const int n, const int k, const int m, const int chunk,
                                 __global const value_type* a, __global const value_type* b,
                                 __global value_type* partial)
{
    const int i = get_global_id(0);
    const int g = get_global_id(1);
    if (i >= k) return;
    const int begin = g * chunk;
    const int end = min(n, begin + chunk);
    value_type s[GRAM_COLUMNS];
    for (int j = 0; j < m; ++j) s[j] = 0;
    for (int r = begin; r < end; ++r) {
        const value_type ai = conj_value(a[r * k + i]);
        for (int j = 0; j < m; ++j) s[j] += mul(ai, b[r * m + j]);
    }
    for (int j = 0; j < m; ++j) partial[(g * k + i) * m + j] = s[j];
}

// ---- robust norms (LAPACK's nrm2): a norm is scale * sqrt(ssq), ssq = sum of (a_i / scale)^2 ---
// In the real type; the real and imaginary parts of a complex entry count as two entries (as
// LAPACK's zlassq).

// (scale, ssq) of the union of two sets of entries; a NaN (entry or sum) makes the sum NaN, so
// that the norm is NaN as numpy's (a comparison with NaN is false: it would be skipped)
inline void merge_scaled(real_type* scale, real_type* ssq, const real_type s2, const real_type q2)
{
    if (isnan(s2) || isnan(q2)) {
        *ssq = NAN;
    } else if (s2 > *scale) {
        *ssq = q2 + *ssq * (*scale / s2) * (*scale / s2);
        *scale = s2;
    } else if (s2 > 0) {
        *ssq += q2 * (s2 / *scale) * (s2 / *scale);
    }
}

// Tree merge of the (scale, ssq) pairs of `count` work-items at slot[index * stride]; the first
// work-item gets the result. Every work-item of the group must call it.
inline void local_merge_scaled(__local real_type* scales, __local real_type* ssqs, real_type scale,
                               real_type ssq, const int index, const int count, const int stride,
                               real_type* out_scale, real_type* out_ssq)
{
    scales[index * stride] = scale;
    ssqs[index * stride] = ssq;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = count / 2; s > 0; s /= 2) {
        if (index < s) {
            real_type a = scales[index * stride], q = ssqs[index * stride];
            merge_scaled(&a, &q, scales[(index + s) * stride], ssqs[(index + s) * stride]);
            scales[index * stride] = a;
            ssqs[index * stride] = q;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *out_scale = scales[0];
    *out_ssq = ssqs[0];
}

// partial[2 g][col], partial[2 g + 1][col] = (scale, ssq) of the group's rows of column col
__kernel void norm2_partials(REDUCTION_PARAMS, __global const value_type* a,
                             __global real_type* partial, __local real_type* scales,
                             __local real_type* ssqs)
{
    REDUCTION_LAYOUT;
    real_type scale = 0, ssq = 0;
    if (col < k) {
        for (int row = begin; row < end; row += lanes) {
            const value_type a_i = a[row * k + col];
#if VALUE_COMPLEX
            const real_type parts[2] = {fabs(a_i.x), fabs(a_i.y)};
            for (int p = 0; p < 2; ++p) {
                if (!(parts[p] == 0)) merge_scaled(&scale, &ssq, parts[p], 1);
            }
#else
            const real_type v = fabs(a_i);
            if (!(v == 0)) merge_scaled(&scale, &ssq, v, 1);
#endif
        }
    }
    real_type s, q;
    local_merge_scaled(scales + c_, ssqs + c_, scale, ssq, y_, lanes, width, &s, &q);
    if (IS_LANE_ROOT) {
        partial[2 * group * k + col] = s;
        partial[(2 * group + 1) * k + col] = q;
    }
}

// result[j] = the norm of column j from its `parts` (scale, ssq) pairs; one group per column
__kernel void norm2_finalize(const int parts, const int k, __global const real_type* partial,
                             __global real_type* result, __local real_type* scales,
                             __local real_type* ssqs)
{
    const int j = get_group_id(0);
    real_type scale = 0, ssq = 0;
    for (int g = get_local_id(0); g < parts; g += get_local_size(0)) {
        merge_scaled(&scale, &ssq, partial[2 * g * k + j], partial[(2 * g + 1) * k + j]);
    }
    real_type s, q;
    local_merge_scaled(scales, ssqs, scale, ssq, get_local_id(0), get_local_size(0), 1, &s, &q);
    if (get_local_id(0) == 0) result[j] = s * sqrt(q);
}

// dst[i] = src[i] in the columns whose mask is set
__kernel void copy_columns(const int size, const int k, __global const uchar* mask,
                           __global const value_type* src, __global value_type* dst)
{
    const int i = get_global_id(0);
    if (i < size && mask[COLUMN(i, k)]) dst[i] = src[i];
}

// partial[g] = number of NaN or infinite entries among a[g * per_group, (g + 1) * per_group)
__kernel void count_nonfinite(const int size, const int per_group, __global const value_type* a,
                              __global int* partial, __local int* tmp)
{
    const int begin = get_group_id(0) * per_group;
    const int end = min(size, begin + per_group);
    int count = 0;
    for (int i = begin + get_local_id(0); i < end; i += get_local_size(0)) {
        count += !is_finite_value(a[i]);
    }
    count = local_sum_int(tmp, count, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = count;
}

// ---- transpose: a TRANSPOSE_TILE square staged in local memory --------------------------
// so that both the reads of a and the writes of out are contiguous across work-items.

#define TRANSPOSE_TILE 16

// out = a^T, or a^H with CONJUGATE
__kernel __attribute__((reqd_work_group_size(TRANSPOSE_TILE, TRANSPOSE_TILE, 1)))
void transpose(const int n, const int k, __global const value_type* a,
               __global value_type* out)
{
    __local value_type tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];  // +1: no bank conflicts
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int col0 = get_group_id(0) * TRANSPOSE_TILE;
    const int row0 = get_group_id(1) * TRANSPOSE_TILE;
    if (row0 + ly < n && col0 + lx < k) tile[ly][lx] = a[(row0 + ly) * k + col0 + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    // out (k x n): out[c][r] = a[r][c]
    if (col0 + ly < k && row0 + lx < n) {
        out[(col0 + ly) * n + row0 + lx] = CONJUGATE ? conj_value(tile[lx][ly]) : tile[lx][ly];
    }
}

// ---- matrix products: x = A b (advanced == 0) or x = alpha A b + beta x ---------------------
// A is n x m, b is m x k, x is n x k. Without `advanced`, alpha and beta are not read.

inline value_type apply_result(const value_type ab, const int advanced, const int j,
                               __global const value_type* alpha, const int alpha_stride,
                               __global const value_type* beta, const int beta_stride,
                               const value_type x)
{
    return advanced ? mul(alpha[j * alpha_stride], ab) + mul(beta[j * beta_stride], x) : ab;
}

// Tiled product (seed 003). A work-group of local size (tile_cols, tile_rows) computes a
// tile_rows x tile_cols block of x, one entry per work-item, stepping through the inner
// dimension in slices of `inner` that the whole group stages in local memory:
// a_tile (tile_rows x inner) and b_tile (inner x tile_cols), zero-padded past the edges.
__kernel void gemm(const int n, const int m, const int k, const int inner,
                   __global const value_type* a, __global const value_type* b,
                   __global value_type* x, const int advanced,
                   __global const value_type* alpha, const int alpha_stride,
                   __global const value_type* beta, const int beta_stride,
                   __local value_type* a_tile, __local value_type* b_tile)
{
    const int lx = get_local_id(0);
    const int ly = get_local_id(1);
    const int tile_cols = get_local_size(0);
    const int tile_rows = get_local_size(1);
    const int group_size = tile_cols * tile_rows;
    const int lid = ly * tile_cols + lx;
    const int row0 = get_group_id(1) * tile_rows;
    const int col0 = get_group_id(0) * tile_cols;
    value_type sum = 0;
    for (int p = 0; p < m; p += inner) {
        for (int e = lid; e < tile_rows * inner; e += group_size) {
            const int r = row0 + e / inner;
            const int c = p + e % inner;
            a_tile[e] = (r < n && c < m) ? a[r * m + c] : 0;
        }
        for (int e = lid; e < inner * tile_cols; e += group_size) {
            const int r = p + e / tile_cols;
            const int c = col0 + e % tile_cols;
            b_tile[e] = (r < m && c < k) ? b[r * k + c] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int q = 0; q < inner; ++q) {
            sum += mul(a_tile[ly * inner + q], b_tile[q * tile_cols + lx]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const int row = row0 + ly;
    const int col = col0 + lx;
    if (row < n && col < k) {
        const int i = row * k + col;
        x[i] = apply_result(sum, advanced, col, alpha, alpha_stride, beta, beta_stride, x[i]);
    }
}

// Narrow product (an inner dimension m of at most NARROW_INNER, as a block of vectors times
// a small coefficient matrix): one work-item per entry of x, no local memory or barriers
// (which cost most on a CPU device), the row of a and b read through the cache.
__kernel void gemm_narrow(const int n, const int m, const int k,
                          __global const value_type* a, __global const value_type* b,
                          __global value_type* x, const int advanced,
                          __global const value_type* alpha, const int alpha_stride,
                          __global const value_type* beta, const int beta_stride)
{
    const int col = get_global_id(0);
    const int row = get_global_id(1);
    if (row >= n || col >= k) return;
    value_type sum = 0;
    for (int q = 0; q < m; ++q) sum += mul(a[row * m + q], b[q * k + col]);
    const int i = row * k + col;
    x[i] = apply_result(sum, advanced, col, alpha, alpha_stride, beta, beta_stride, x[i]);
}

// Matrix-vector product (b has one column). A work-group is `rows` rows of `lanes`
// work-items (a one-dimensional local size: PoCL runs the tail of a kernel twice for local
// sizes (1, r) when a barrier loop has no trips). The lanes of a row read it contiguously
// and sum in local memory; lanes == 1 is one work-item per row (what a CPU device wants).
__kernel void gemv(const int n, const int m, const int lanes, __global const value_type* a,
                   __global const value_type* b, __global value_type* x, const int advanced,
                   __global const value_type* alpha, const int alpha_stride,
                   __global const value_type* beta, const int beta_stride,
                   __local value_type* tmp)
{
    const int lane = get_local_id(0) % lanes;
    const int y = get_local_id(0) / lanes;
    const int row = get_group_id(0) * (get_local_size(0) / lanes) + y;
    value_type sum = 0;
    if (row < n) {
        for (int q = lane; q < m; q += lanes) sum += mul(a[row * m + q], b[q]);
    }
    sum = local_sum(tmp + y * lanes, sum, lane, lanes, 1);
    if (row < n && lane == 0) {
        x[row] = apply_result(sum, advanced, 0, alpha, alpha_stride, beta, beta_stride, x[row]);
    }
}

// ---- conversion to CSR: count per row, prefix sum, fill ------------------------------------

// row_ptrs[i + 1] = number of nonzeros of row i; row_ptrs[0] = 0
__kernel void count_row_nonzeros(const int n, const int k, __global const value_type* a,
                                 __global int* row_ptrs)
{
    const int i = get_global_id(0);
    if (i == 0) row_ptrs[0] = 0;
    if (i < n) {
        int count = 0;
        for (int j = 0; j < k; ++j) count += !is_zero(a[i * k + j]);
        row_ptrs[i + 1] = count;
    }
}

// partial[g] = sum of v[g * per_group, (g + 1) * per_group): the first pass of the scan
__kernel void block_sums(const int size, const int per_group, __global const int* v,
                         __global int* partial, __local int* tmp)
{
    const int begin = get_group_id(0) * per_group;
    const int end = min(size, begin + per_group);
    int sum = 0;
    for (int i = begin + get_local_id(0); i < end; i += get_local_size(0)) sum += v[i];
    sum = local_sum_int(tmp, sum, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) partial[get_group_id(0)] = sum;
}

// In-place inclusive prefix sum of v. Group g starts from the sum of the partials of the
// groups before it and scans its block in slices of the group size (Hillis-Steele in local
// memory), carrying the running total from slice to slice.
__kernel void scan_blocks(const int size, const int per_group, __global int* v,
                          __global const int* partial, __local int* tmp)
{
    const int lid = get_local_id(0);
    const int width = get_local_size(0);
    const int g = get_group_id(0);
    int offset = 0;
    for (int q = lid; q < g; q += width) offset += partial[q];
    offset = local_sum_int(tmp, offset, get_local_id(0), get_local_size(0), 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    const int begin = g * per_group;
    const int end = min(size, begin + per_group);
    for (int base = begin; base < end; base += width) {
        const int i = base + lid;
        tmp[lid] = i < end ? v[i] : 0;
        local_scan_int(tmp, lid, width);
        if (i < end) v[i] = offset + tmp[lid];
        offset += tmp[width - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// Column indices and values of the nonzeros of row i, from position row_ptrs[i] on
__kernel void fill_csr(const int n, const int k, __global const value_type* a,
                       __global const int* row_ptrs, __global int* col_idxs,
                       __global value_type* values)
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int nz = row_ptrs[i];
    for (int j = 0; j < k; ++j) {
        const value_type v = a[i * k + j];
        if (!is_zero(v)) {
            col_idxs[nz] = j;
            values[nz] = v;
            ++nz;
        }
    }
}

// ---- permutation and scaling ---------------------------------------------------------------

#ifndef ROWS  // permute: a row index array is given (else the rows stay)
#define ROWS 0
#endif
#ifndef COLS  // permute: a column index array is given (else the columns stay)
#define COLS 0
#endif

// out[i, j] = a[rows[i], cols[j]]; one work-item per entry of the n x k result
__kernel void permute(const int size, const int k, __global const int* rows, __global const int* cols,
                      __global const value_type* a, __global value_type* out)
{
    const int e = get_global_id(0);
    if (e < size) {
        const int i = e / k, j = e - i * k;
        const int src_i = ROWS ? rows[i] : i;
        const int src_j = COLS ? cols[j] : j;
        out[e] = a[src_i * k + src_j];
    }
}

// x[i, j] = diag[i] b[i, j]; one work-item per entry
__kernel void scale_rows(const int size, const int k, __global const value_type* diag,
                         __global const value_type* b, __global value_type* x)
{
    const int e = get_global_id(0);
    if (e < size) x[e] = mul(diag[e / k], b[e]);
}
