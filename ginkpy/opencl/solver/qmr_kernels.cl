// Kernels of Qmr: one work-item per entry of the n x k vectors (entry (row, c) at row * k + c;
// step_4: one per column); scalars are 1 x k, rho, xi, gamma and theta real values in the value
// type. Columns with a nonzero stop status are left untouched; where a divisor is below SciPy's
// threshold (EPSILON of the value type) the work-item of row 0 writes STATUS_BREAKDOWN and every
// work-item of the column skips it, and writes which breakdown it was to kind[c], numbered as
// SciPy's qmr (10 rho, 11 beta, 12 gamma, 13 delta, 14 epsilon, 15 xi). A scalar that a vector
// kernel writes is never read by it.
#include "common.cl"

// in the columns of the mask: p = q = d = s = 0;  rho = sqrt(|yy|);  xi = sqrt(|zz|);
// gamma = 1, eta = -1, theta = 0, epsilon = 1;  kind = 0 (work-items i < size for the vectors,
// i < k for the scalars)
__kernel void initialize(const int size, const int k, __global value_type* p,
                         __global value_type* q, __global value_type* d,
                         __global value_type* s, __global const value_type* yy,
                         __global const value_type* zz, __global value_type* rho,
                         __global value_type* xi, __global value_type* gamma,
                         __global value_type* eta, __global value_type* theta,
                         __global value_type* epsilon, __global uchar* kind,
                         __global const uchar* columns)
{
    const int i = get_global_id(0);
    if (i < size && columns[COLUMN(i, k)]) {
        p[i] = 0;
        q[i] = 0;
        d[i] = 0;
        s[i] = 0;
    }
    if (i < k && columns[i]) {
        rho[i] = to_value(sqrt(fabs(real_part(yy[i]))));
        xi[i] = to_value(sqrt(fabs(real_part(zz[i]))));
        gamma[i] = to_value(1);
        eta[i] = to_value(-1);
        theta[i] = 0;
        epsilon[i] = to_value(1);
        kind[i] = 0;
    }
}

// |rho| < eps (10) or |xi| < eps (15): breakdown;  v = v_tld / rho;  y = y_in / rho;  w = w_tld / xi;
// z = z_in / xi
__kernel void step_1(const int size, const int k, __global const value_type* v_tld,
                     __global const value_type* y_in, __global const value_type* w_tld,
                     __global const value_type* z_in, __global value_type* v,
                     __global value_type* y, __global value_type* w, __global value_type* z,
                     __global const value_type* rho, __global const value_type* xi,
                     __global uchar* status, __global uchar* kind)
{
    const int i = get_global_id(0);
    if (i >= (size > k ? size : k)) return;
    const int c = COLUMN(i, k);
    if (status[c] != STATUS_RUNNING) return;
    const real_type r = real_part(rho[c]), x_ = real_part(xi[c]);
    if (fabs(r) < EPSILON || fabs(x_) < EPSILON) {
        if (i < k) {
            status[c] = STATUS_BREAKDOWN;
            kind[c] = fabs(r) < EPSILON ? 10 : 15;
        }
        return;
    }
    if (i >= size) return;
    v[i] = v_tld[i] / r;
    y[i] = y_in[i] / r;
    w[i] = w_tld[i] / x_;
    z[i] = z_in[i] / x_;
}

// |delta| < eps: breakdown (13);  p = y_tld - (xi delta / epsilon) p;
// q = z_tld - (rho conj(delta / epsilon)) q
__kernel void step_2(const int size, const int k, __global const value_type* y_tld,
                     __global const value_type* z_tld, __global value_type* p,
                     __global value_type* q, __global const value_type* delta,
                     __global const value_type* epsilon, __global const value_type* rho,
                     __global const value_type* xi, __global uchar* status,
                     __global uchar* kind)
{
    const int i = get_global_id(0);
    if (i >= (size > k ? size : k)) return;
    const int c = COLUMN(i, k);
    if (status[c] != STATUS_RUNNING) return;
    if (abs_value(delta[c]) < EPSILON) {
        if (i < k) {
            status[c] = STATUS_BREAKDOWN;
            kind[c] = 13;
        }
        return;
    }
    if (i >= size) return;
    const value_type ratio = divide(delta[c], epsilon[c]);
    p[i] = y_tld[i] - mul(mul(xi[c], ratio), p[i]);
    q[i] = z_tld[i] - mul(mul(rho[c], conj_value(ratio)), q[i]);
}

// |eps_new| < eps (14) or |beta| < eps (11; beta = eps_new / delta): breakdown;  v_tld = p_tld - beta v;
// w_tld = -conj(beta) w
__kernel void step_3(const int size, const int k, __global const value_type* p_tld,
                     __global const value_type* v, __global const value_type* w,
                     __global value_type* v_tld, __global value_type* w_tld,
                     __global const value_type* eps_new, __global const value_type* delta,
                     __global value_type* beta, __global uchar* status,
                     __global uchar* kind)
{
    const int i = get_global_id(0);
    if (i >= (size > k ? size : k)) return;
    const int c = COLUMN(i, k);
    if (status[c] != STATUS_RUNNING) return;
    const bool ok = abs_value(eps_new[c]) >= EPSILON;
    const value_type b = ok ? divide(eps_new[c], delta[c]) : 0;
    if (!ok || abs_value(b) < EPSILON) {
        if (i < k) {
            status[c] = STATUS_BREAKDOWN;
            kind[c] = ok ? 11 : 14;
        }
        return;
    }
    if (i < k) beta[c] = b;
    if (i >= size) return;
    v_tld[i] = p_tld[i] - mul(b, v[i]);
    w_tld[i] = -mul(conj_value(b), w[i]);
}

// one work-item per column: rho = sqrt(|yy|), xi = sqrt(|zz|);  theta = rho / (gamma |beta|);
// gamma = 1 / sqrt(1 + theta^2) (|gamma| < eps: breakdown 12);
// eta = -eta (rho_prev / beta) (gamma / gamma_prev)^2;  coef = (theta_prev gamma)^2;  epsilon = eps_new
__kernel void step_4(const int size, const int k, __global const value_type* yy,
                     __global const value_type* zz, __global const value_type* beta,
                     __global const value_type* eps_new, __global value_type* rho,
                     __global value_type* xi, __global value_type* gamma,
                     __global value_type* eta, __global value_type* theta,
                     __global value_type* epsilon, __global value_type* coef,
                     __global uchar* status, __global uchar* kind)
{
    const int c = get_global_id(0);
    if (c >= k || status[c] != STATUS_RUNNING) return;
    const real_type rho_prev = real_part(rho[c]), gamma_prev = real_part(gamma[c]);
    const real_type theta_prev = real_part(theta[c]);
    const real_type rho_new = sqrt(fabs(real_part(yy[c])));
    const real_type t = rho_new / (gamma_prev * abs_value(beta[c]));
    const real_type g = 1 / sqrt(1 + t * t);
    if (!(fabs(g) >= EPSILON)) {
        status[c] = STATUS_BREAKDOWN;
        kind[c] = 12;
        return;
    }
    const real_type ratio = g / gamma_prev;
    eta[c] = -mul(eta[c], divide(to_value(rho_prev * ratio * ratio), beta[c]));
    coef[c] = to_value((theta_prev * g) * (theta_prev * g));
    rho[c] = to_value(rho_new);
    xi[c] = to_value(sqrt(fabs(real_part(zz[c]))));
    theta[c] = to_value(t);
    gamma[c] = to_value(g);
    epsilon[c] = eps_new[c];
}

// d = coef d + eta p;  s = coef s + eta p_tld;  x = x + d;  r = r - s
__kernel void step_5(const int size, const int k, __global const value_type* p,
                     __global const value_type* p_tld, __global value_type* d,
                     __global value_type* s, __global value_type* x, __global value_type* r,
                     __global const value_type* coef, __global const value_type* eta,
                     __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    const value_type d_i = mul(coef[c], d[i]) + mul(eta[c], p[i]);
    const value_type s_i = mul(coef[c], s[i]) + mul(eta[c], p_tld[i]);
    d[i] = d_i;
    s[i] = s_i;
    x[i] += d_i;
    r[i] -= s_i;
}
