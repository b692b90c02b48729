// Kernels of Bicgstab. The steps run one work-item per entry of the n x k vectors (entry
// (row, c) at row * k + c); scalars are 1 x k. Columns with a nonzero stop status are left
// untouched; a zero divisor makes the work-item of row 0 write STATUS_BREAKDOWN and every
// work-item of the column skip it. Every work-item of a column must take the same decision,
// so a kernel never writes a scalar it reads (work-items of one launch are not ordered):
// step_1 decides the restart from rho, rr and rhat_sq and records it in `restarted`, and
// step_2 reads that flag and updates prev_rho and rhat_sq; omega is updated in step_3.
#include "common.cl"

__kernel void initialize(const int size, const int k, __global const value_type* r,
                         __global value_type* r_hat, __global value_type* p,
                         __global value_type* v, __global value_type* s,
                         __global value_type* prev_rho, __global value_type* alpha,
                         __global value_type* omega)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    // r_hat = r;  p = v = s = 0;  prev_rho = alpha = omega = 1
    r_hat[i] = r[i];
    p[i] = 0;
    v[i] = 0;
    s[i] = 0;
    if (i < k) {
        prev_rho[i] = 1;
        alpha[i] = 1;
        omega[i] = 1;
    }
}

// Column reduction shaped as Dense's column_dot: work-group (c, g) is `width` columns by
// `lanes` rows of work-items (lanes a power of two) and sums the rows
// [g * rows_per_group, (g + 1) * rows_per_group) of columns [c * width, (c + 1) * width);
// work-item (x, y) adds rows begin + y, begin + y + lanes, ... of column c * width + x.
// ab[g * k + col] = the group's part of a . b and bb[g * k + col] of b . b: the results with
// one group per column, else the partials that sum_dots adds. tmp holds 2 * local size values.
__kernel void dots(const int n, const int k, const int width, const int rows_per_group,
                   __global const value_type* a, __global const value_type* b,
                   __global value_type* ab, __global value_type* bb, __local value_type* tmp)
{
    const int lid = get_local_id(0);
    const int x = lid % width;
    const int y = lid / width;
    const int lanes = get_local_size(0) / width;
    const int col = get_group_id(0) * width + x;
    const int begin = get_group_id(1) * rows_per_group;
    const int end = min(n, begin + rows_per_group);
    // two independent partial sums of each product: shorter dependency chains
    value_type sum_ab[2] = {0, 0};
    value_type sum_bb[2] = {0, 0};
    if (col < k) {
        int row = begin + y;
        for (; row + lanes < end; row += 2 * lanes) {
            for (int u = 0; u < 2; ++u) {
                const int i = (row + u * lanes) * k + col;
                const value_type bi = b[i];
                sum_ab[u] += a[i] * bi;
                sum_bb[u] += bi * bi;
            }
        }
        if (row < end) {
            const value_type bi = b[row * k + col];
            sum_ab[0] += a[row * k + col] * bi;
            sum_bb[0] += bi * bi;
        }
    }
    // both sums leave the arrays before the first barrier: PoCL lost a float array's values
    // when it stayed live across a barrier
    const value_type part_ab = sum_ab[0] + sum_ab[1];
    const value_type part_bb = sum_bb[0] + sum_bb[1];
    const value_type total_ab = local_sum(tmp + x, part_ab, y, lanes, width);
    const value_type total_bb = local_sum(tmp + get_local_size(0) + x, part_bb, y, lanes, width);
    if (y == 0 && col < k) {
        ab[get_group_id(1) * k + col] = total_ab;
        bb[get_group_id(1) * k + col] = total_bb;
    }
}

// The second pass of dots: work-group j < k writes ab[j] = sum over g of ab_part[g * k + j],
// work-group k + j writes bb[j] from bb_part likewise; a tree in local memory.
__kernel void sum_dots(const int parts, const int k, __global const value_type* ab_part,
                       __global const value_type* bb_part, __global value_type* ab,
                       __global value_type* bb, __local value_type* tmp)
{
    const int lid = get_local_id(0);
    const int is_bb = get_group_id(0) >= k;
    const int j = get_group_id(0) - is_bb * k;
    __global const value_type* part = is_bb ? bb_part : ab_part;
    value_type sum = 0;
    for (int g = lid; g < parts; g += get_local_size(0)) sum += part[g * k + j];
    sum = local_sum(tmp, sum, lid, get_local_size(0), 1);
    if (lid == 0) (is_bb ? bb : ab)[j] = sum;
}

// Restart where |rho| <= restart_tol ||r_hat|| ||r|| (r_hat numerically orthogonal to r):
// r_hat = p = r and restarted = 1; elsewhere restarted = 0, omega == 0 is a breakdown, and
// p = r + (rho / prev_rho) (alpha / omega) (p - omega v)
__kernel void step_1(const int size, const int k, __global const value_type* r,
                     __global value_type* r_hat, __global value_type* p,
                     __global const value_type* v, __global const value_type* rho,
                     __global const value_type* rr, __global const value_type* rhat_sq,
                     __global const value_type* prev_rho, __global const value_type* alpha,
                     __global const value_type* omega, const value_type restart_tol,
                     __global uchar* restarted, __global uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (status[c] != STATUS_RUNNING) return;
    const int restart = fabs(rho[c]) <= restart_tol * sqrt(rhat_sq[c]) * sqrt(rr[c]);
    if (i < k) restarted[c] = restart;
    if (restart) {
        r_hat[i] = r[i];
        p[i] = r[i];
        return;
    }
    if (omega[c] == 0) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    const value_type beta = (rho[c] / prev_rho[c]) * (alpha[c] / omega[c]);
    p[i] = r[i] + beta * (p[i] - omega[c] * v[i]);
}

// rho = rhat_sq = rr where step_1 restarted;  alpha = rho / rv;  s = r - alpha v;
// prev_rho = rho;  rv == 0 is a breakdown
__kernel void step_2(const int size, const int k, __global const value_type* r,
                     __global value_type* s, __global const value_type* v,
                     __global const value_type* rho, __global const value_type* rr,
                     __global value_type* rhat_sq, __global value_type* prev_rho,
                     __global value_type* alpha, __global const value_type* rv,
                     __global const uchar* restarted, __global uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (status[c] != STATUS_RUNNING) return;
    if (rv[c] == 0) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    const value_type rho_c = restarted[c] ? rr[c] : rho[c];
    const value_type a = rho_c / rv[c];
    s[i] = r[i] - a * v[i];
    if (i < k) {
        alpha[c] = a;
        prev_rho[c] = rho_c;
        if (restarted[c]) rhat_sq[c] = rr[c];
    }
}

__kernel void step_3(const int size, const int k, __global value_type* x,
                     __global value_type* r, __global const value_type* s,
                     __global const value_type* t, __global const value_type* y,
                     __global const value_type* z, __global const value_type* alpha,
                     __global value_type* omega, __global const value_type* ts,
                     __global const value_type* tt, __global uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (status[c] != STATUS_RUNNING) return;
    // omega = ts / tt (0 where tt == 0: s == 0);  x += alpha y + omega z;  r = s - omega t
    const value_type w = tt[c] != 0 ? ts[c] / tt[c] : 0;
    x[i] += alpha[c] * y[i] + w * z[i];
    r[i] = s[i] - w * t[i];
    if (i < k) omega[c] = w;
}
