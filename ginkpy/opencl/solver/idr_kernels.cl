// Kernels of Idr. Vectors are n x k (entry (row, c) at row * k + c; `size` = n k); G and U
// hold s such blocks, block l at l * size; m is s x s k (m_{i,l} of column c at
// i * s k + l * k + c); f, c, h and alpha are s x k; scalars 1 x k. Vector kernels run one
// work-item per entry, the small per-column problems (*_scalars) one work-item per column.
// Columns with a nonzero stop status are left untouched. A division by 0 whose numerator
// is not 0 writes STATUS_BREAKDOWN (by one work-item) and the column is skipped; 0 / 0 is 0.
#include "common.cl"

#define M(i, l, q) m[(i) * s * k + (l) * k + (q)]

// c = m \ f: forward substitution over rows j .. s-1 of column q
__kernel void solve_c(const int size, const int k, const int j, const int s,
                      __global const value_type* m, __global const value_type* f,
                      __global value_type* c, __global uchar* status)
{
    const int q = get_global_id(0);
    if (q >= size || status[q] != STATUS_RUNNING) return;
    for (int i = j; i < s; ++i) {
        value_type num = f[i * k + q];
        for (int l = j; l < i; ++l) num -= mul(M(i, l, q), c[l * k + q]);
        const value_type den = M(i, i, q);
        if (!is_zero(num) && is_zero(den)) {
            status[q] = STATUS_BREAKDOWN;
            return;
        }
        c[i * k + q] = !is_zero(num) ? divide(num, den) : 0;
    }
}

// v = r - sum_{l >= j} c_l g_l
__kernel void step_1(const int size, const int k, const int j, const int s,
                     __global const value_type* r, __global const value_type* g,
                     __global const value_type* c, __global value_type* v,
                     __global const uchar* status)
{
    const int i = get_global_id(0), q = COLUMN(i, k);
    if (!running_entry(i, q, size, status)) return;
    value_type value = r[i];
    for (int l = j; l < s; ++l) value -= mul(c[l * k + q], g[l * size + i]);
    v[i] = value;
}

// u_j = omega z + sum_{l >= j} c_l u_l
__kernel void step_2(const int size, const int k, const int j, const int s,
                     __global const value_type* omega, __global const value_type* z,
                     __global const value_type* c, __global const value_type* u,
                     __global value_type* u_j, __global const uchar* status)
{
    const int i = get_global_id(0), q = COLUMN(i, k);
    if (!running_entry(i, q, size, status)) return;
    value_type value = mul(omega[q], z[i]);
    for (int l = j; l < s; ++l) value += mul(c[l * k + q], u[l * size + i]);
    u_j[i] = value;
}

// From h = P^H g_j: alpha_i = (h_i - sum_{l < i} m_{i,l} alpha_l) / m_{i,i} (i < j);
// m_{i,j} = h_i - sum_{l < j} m_{i,l} alpha_l (i >= j);  beta = alpha_j = f_j / m_{j,j};
// f_i -= beta m_{i,j} (i > j)
__kernel void step_3_scalars(const int size, const int k, const int j, const int s,
                             __global const value_type* h, __global value_type* m,
                             __global value_type* f, __global value_type* alpha,
                             __global uchar* status)
{
    const int q = get_global_id(0);
    if (q >= size || status[q] != STATUS_RUNNING) return;
    for (int i = 0; i < s; ++i) {
        value_type num = h[i * k + q];
        for (int l = 0; l < min(i, j); ++l) num -= mul(M(i, l, q), alpha[l * k + q]);
        if (i < j) {
            const value_type den = M(i, i, q);
            if (!is_zero(num) && is_zero(den)) {
                status[q] = STATUS_BREAKDOWN;
                return;
            }
            alpha[i * k + q] = !is_zero(num) ? divide(num, den) : 0;
        } else {
            M(i, j, q) = num;
        }
    }
    const value_type f_j = f[j * k + q];
    const value_type m_jj = M(j, j, q);
    if (!is_zero(f_j) && is_zero(m_jj)) {
        status[q] = STATUS_BREAKDOWN;
        return;
    }
    const value_type beta = !is_zero(f_j) ? divide(f_j, m_jj) : 0;
    alpha[j * k + q] = beta;
    for (int i = j + 1; i < s; ++i) f[i * k + q] -= mul(beta, M(i, j, q));
}

// g_j -= sum_{l < j} alpha_l g_l and u_j likewise, stored as block j of G and U;
// r -= beta g_j;  x += beta u_j  (beta = alpha_j)
__kernel void step_3(const int size, const int k, const int j,
                     __global const value_type* alpha, __global const value_type* g_j,
                     __global const value_type* u_j, __global value_type* g,
                     __global value_type* u, __global value_type* r, __global value_type* x,
                     __global const uchar* status)
{
    const int i = get_global_id(0), q = COLUMN(i, k);
    if (!running_entry(i, q, size, status)) return;
    value_type g_value = g_j[i];
    value_type u_value = u_j[i];
    for (int l = 0; l < j; ++l) {
        g_value -= mul(alpha[l * k + q], g[l * size + i]);
        u_value -= mul(alpha[l * k + q], u[l * size + i]);
    }
    g[j * size + i] = g_value;
    u[j * size + i] = u_value;
    const value_type beta = alpha[j * k + q];
    r[i] -= mul(beta, g_value);
    x[i] += mul(beta, u_value);
}

// omega = tr / tt, or (tr / |tr|) kappa |r| / |t| where |tr| / (|t| |r|) < kappa (tt = |t|^2);
// x += omega z;  r -= omega t (in this order: z may be r itself).  r == 0 leaves the column as it is; t == 0 while r is not,
// or omega == 0, is a breakdown.
__kernel void step_4(const int size, const int k, const real_type kappa,
                     __global const value_type* tr, __global const value_type* tt,
                     __global const real_type* r_norm, __global value_type* omega,
                     __global const value_type* z, __global const value_type* t,
                     __global value_type* r, __global value_type* x,
                     __global uchar* status)
{
    const int i = get_global_id(0), q = COLUMN(i, k);
    if (!running_entry(i, q, size, status)) return;
    const value_type tr_q = tr[q];
    const real_type tt_q = real_part(tt[q]);
    const real_type r_q = r_norm[q];
    if (r_q == 0) return;
    value_type w = tt_q != 0 ? tr_q / tt_q : 0;
    if (tt_q != 0 && abs_value(tr_q) / (sqrt(tt_q) * r_q) < kappa) {
        const value_type phase = is_zero(tr_q) ? to_value(1) : tr_q / abs_value(tr_q);
        w = phase * (kappa * r_q / sqrt(tt_q));
    }
    if (is_zero(w)) {
        if (i < k) status[q] = STATUS_BREAKDOWN;
        return;
    }
    if (i < k) omega[q] = w;
    x[i] += mul(w, z[i]);
    r[i] -= mul(w, t[i]);
}
