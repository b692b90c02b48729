// Kernels of Cg, each one fused launch over the n x k vectors (entry i in column i % k).
// Columns whose stop status is nonzero are left untouched.
#include "common.cl"

// p = q = 0, rho = 0, prev_rho = 1 (work-items i < size for the vectors, i < k for the scalars)
__kernel void initialize(const int size, const int k, __global value_type* p,
                         __global value_type* q, __global value_type* rho,
                         __global value_type* prev_rho)
{
    const int i = get_global_id(0);
    if (i < size) {
        p[i] = 0;
        q[i] = 0;
    }
    if (i < k) {
        rho[i] = 0;
        prev_rho[i] = 1;
    }
}

// p = z + (rho / prev_rho) p, where rho / prev_rho is 0 if prev_rho is 0
__kernel void step_1(const int size, const int k, __global value_type* p,
                     __global const value_type* z, __global const value_type* rho,
                     __global const value_type* prev_rho, __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int j = COLUMN(i, k);
    if (status[j] != STATUS_RUNNING) return;
    const value_type tmp = prev_rho[j] != 0 ? rho[j] / prev_rho[j] : 0;
    p[i] = z[i] + tmp * p[i];
}

// x = x + (rho / beta) p;  r = r - (rho / beta) q;  prev_rho = rho;  and in the same pass
// the sum of r^2 of each column (all columns: the stopping check's ||r||), as column_dot does.
// beta <= 0 or rho == 0 is a breakdown: the column is skipped and one work-item writes
// BREAKDOWN to status[col] (work-items that read status[col] before or after that skip the
// column either way: it is not ok). Rows begin, begin + stride, ... below end of column col.
inline value_type step_2_rows(const int begin, const int end, const int stride, const int k,
                              const int col, __global value_type* x, __global value_type* r,
                              __global const value_type* p, __global const value_type* q,
                              __global const value_type* beta, __global const value_type* rho,
                              __global value_type* prev_rho, __global uchar* status,
                              const bool writer)
{
    const bool running = status[col] == STATUS_RUNNING;
    const bool ok = beta[col] > 0 && rho[col] != 0;
    const bool go = running && ok;
    const value_type alpha = go ? rho[col] / beta[col] : 0;
    value_type sum = 0;
    for (int row = begin; row < end; row += stride) {
        const int i = row * k + col;
        value_type r_i = r[i];
        if (go) {
            x[i] += alpha * p[i];
            r_i -= alpha * q[i];
            r[i] = r_i;
        }
        sum += r_i * r_i;
    }
    if (writer && running) {
        if (ok) {
            prev_rho[col] = rho[col];
        } else {
            status[col] = STATUS_BREAKDOWN;
        }
    }
    return sum;
}

// GPU layout (as column_dot): work-item (c, y) of a group of width columns by lanes rows takes
// rows begin + y, begin + y + lanes, ...; the lanes' sums meet in local memory.
__kernel void step_2(const int n, const int k, const int width, const int rows_per_group,
                     __global value_type* x, __global value_type* r, __global const value_type* p,
                     __global const value_type* q, __global const value_type* beta,
                     __global const value_type* rho, __global value_type* prev_rho,
                     __global uchar* status, __global value_type* partial, const int root,
                     __local value_type* tmp)
{
    const int c = get_local_id(0) % width;
    const int y = get_local_id(0) / width;
    const int lanes = get_local_size(0) / width;
    const int col = get_group_id(0) * width + c;
    const int begin = get_group_id(1) * rows_per_group;
    value_type sum = 0;
    if (col < k) {
        sum = step_2_rows(begin + y, min(n, begin + rows_per_group), lanes, k, col, x, r, p, q,
                          beta, rho, prev_rho, status, get_group_id(1) == 0 && y == 0);
    }
    sum = local_sum(tmp + c, sum, y, lanes, width);
    if (y == 0 && col < k) partial[get_group_id(1) * k + col] = root ? sqrt(sum) : sum;
}

// CPU layout (as column_dot_blocked): work-item (g, col) alone takes a contiguous stretch of rows.
__kernel void step_2_blocked(const int n, const int k, const int rows_per_item,
                             __global value_type* x, __global value_type* r,
                             __global const value_type* p, __global const value_type* q,
                             __global const value_type* beta, __global const value_type* rho,
                             __global value_type* prev_rho, __global uchar* status,
                             __global value_type* partial, const int root)
{
    const int g = get_global_id(0);
    const int col = get_global_id(1);
    const int begin = g * rows_per_item;
    const value_type sum = step_2_rows(begin, min(n, begin + rows_per_item), 1, k, col, x, r, p, q,
                                       beta, rho, prev_rho, status, g == 0);
    partial[g * k + col] = root ? sqrt(sum) : sum;
}
