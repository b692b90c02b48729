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

// x = x + (rho / beta) p;  r = r - (rho / beta) q;  prev_rho = rho.
// beta <= 0 or rho == 0 is a breakdown: the column is skipped and work-item j (< k) alone
// writes BREAKDOWN to status[j] (work-items that read status[j] before or after that skip the
// column either way). Launched with max(size, k) work-items so that n == 0 still updates
// status and prev_rho.
__kernel void step_2(const int size, const int k, __global value_type* x,
                     __global value_type* r, __global const value_type* p,
                     __global const value_type* q, __global const value_type* beta,
                     __global const value_type* rho, __global value_type* prev_rho,
                     __global uchar* status)
{
    const int i = get_global_id(0);
    const int j = COLUMN(i, k);
    if (i >= max(size, k) || status[j] != STATUS_RUNNING) return;
    const bool ok = beta[j] > 0 && rho[j] != 0;
    if (i < k) {
        if (ok) {
            prev_rho[j] = rho[j];
        } else {
            status[j] = STATUS_BREAKDOWN;
        }
    }
    if (ok && i < size) {
        const value_type alpha = rho[j] / beta[j];
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
    }
}
