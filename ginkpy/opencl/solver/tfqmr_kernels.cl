// Kernels of Tfqmr: one work-item per entry of the n x k vectors (entry (row, c) at
// row * k + c; step_3: one per column); scalars are 1 x k, theta, tau, m and phase real
// values in the value type (phase 0: the half step about to run is even, 1: odd). Columns
// with a nonzero stop status are left untouched; a zero divisor makes the work-item of row 0
// write STATUS_BREAKDOWN and every work-item of the column skip it. A scalar that a vector
// kernel writes is never read by it.
#include "common.cl"

// in the columns of the mask: u = w = r_tld = r;  v = d = 0;  rho = rr;  tau = sqrt(|rr|);
// theta = eta = m = phase = 0 (work-items i < size for the vectors, i < k for the scalars)
__kernel void initialize(const int size, const int k, __global const value_type* r,
                         __global value_type* u, __global value_type* w,
                         __global value_type* r_tld, __global value_type* v,
                         __global value_type* d, __global const value_type* rr,
                         __global value_type* tau, __global value_type* rho,
                         __global value_type* theta, __global value_type* eta,
                         __global value_type* m, __global value_type* phase,
                         __global const uchar* columns)
{
    const int i = get_global_id(0);
    if (i < size && columns[COLUMN(i, k)]) {
        const value_type r_i = r[i];
        u[i] = r_i;
        w[i] = r_i;
        r_tld[i] = r_i;
        v[i] = 0;
        d[i] = 0;
    }
    if (i < k && columns[i]) {
        rho[i] = rr[i];
        tau[i] = to_value(sqrt(fabs(real_part(rr[i]))));
        theta[i] = 0;
        eta[i] = 0;
        m[i] = 0;
        phase[i] = 0;
    }
}

// where the half step is even: v = v + u_hat
__kernel void step_1(const int size, const int k, __global const value_type* u_hat,
                     __global value_type* v, __global const value_type* phase,
                     __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status) || real_part(phase[c]) != 0) return;
    v[i] += u_hat[i];
}

// even half step: alpha = rho / rv (rv == 0 or rho == 0: breakdown);  w = w - alpha u_hat;
// d = u + (theta^2 eta / alpha) d;  even: u = u - alpha v
__kernel void step_2(const int size, const int k, __global value_type* u,
                     __global const value_type* v, __global value_type* w,
                     __global value_type* d, __global const value_type* u_hat,
                     __global const value_type* rv, __global value_type* alpha,
                     __global const value_type* rho, __global const value_type* theta,
                     __global const value_type* eta, __global const value_type* phase,
                     __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, max(size, k), status)) return;
    const bool even = real_part(phase[c]) == 0;
    if (even && (is_zero(rv[c]) || is_zero(rho[c]))) {
        if (i < k) status[c] = STATUS_BREAKDOWN;
        return;
    }
    const value_type a = even ? divide(rho[c], rv[c]) : alpha[c];
    if (even && i < k) alpha[c] = a;
    if (i >= size) return;
    const real_type t = real_part(theta[c]);
    const value_type coef = divide(mul(to_value(t * t), eta[c]), a);
    const value_type u_i = u[i];
    w[i] -= mul(a, u_hat[i]);
    d[i] = u_i + mul(coef, d[i]);
    if (even) u[i] = u_i - mul(a, v[i]);
}

// one work-item per column: theta = ||w|| / tau (tau == 0: breakdown);  c^2 = 1 / (1 + theta^2);
// tau = tau theta c;  eta = c^2 alpha;  m = m + 1;  est = tau^2 m;  odd half step:
// beta = wr / rho, rho = wr;  phase = 1 - phase
__kernel void step_3(const int size, const int k, __global const value_type* ww,
                     __global const value_type* wr, __global const value_type* alpha,
                     __global value_type* rho, __global value_type* theta,
                     __global value_type* eta, __global value_type* tau,
                     __global value_type* beta, __global value_type* m,
                     __global value_type* phase, __global value_type* est,
                     __global uchar* status)
{
    const int c = get_global_id(0);
    if (c >= k || status[c] != STATUS_RUNNING) return;
    const real_type tau_c = real_part(tau[c]);
    if (tau_c == 0) {
        status[c] = STATUS_BREAKDOWN;
        return;
    }
    const real_type t = sqrt(fabs(real_part(ww[c]))) / tau_c;
    const real_type c2 = 1 / (1 + t * t);
    const real_type tau_new = tau_c * t * sqrt(c2);
    const real_type m_new = real_part(m[c]) + 1;
    theta[c] = to_value(t);
    tau[c] = to_value(tau_new);
    eta[c] = mul(to_value(c2), alpha[c]);
    m[c] = to_value(m_new);
    est[c] = to_value(tau_new * tau_new * m_new);
    if (real_part(phase[c]) != 0) {
        beta[c] = divide(wr[c], rho[c]);
        rho[c] = wr[c];
        phase[c] = 0;
    } else {
        phase[c] = to_value(1);
    }
}

// x = x + eta z (z = M d);  after an odd half step (phase 0 now): u = w + beta u;
// v = beta (u_hat + beta v)
__kernel void step_4(const int size, const int k, __global const value_type* z,
                     __global value_type* x, __global value_type* u,
                     __global const value_type* w, __global value_type* v,
                     __global const value_type* u_hat, __global const value_type* eta,
                     __global const value_type* beta, __global const value_type* phase,
                     __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    x[i] += mul(eta[c], z[i]);
    if (real_part(phase[c]) == 0) {
        const value_type b = beta[c];
        u[i] = w[i] + mul(b, u[i]);
        v[i] = mul(b, u_hat[i] + mul(b, v[i]));
    }
}
