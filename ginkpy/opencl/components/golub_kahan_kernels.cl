// Kernels of the Golub-Kahan bidiagonalization that Lsqr and Lsmr share, and SciPy's stable
// Givens rotation and stopping tests for their per-column kernels (included by lsqr_kernels.cl and
// lsmr_kernels.cl). u is m x k, v and Atu n x k (entry (row, c) at row * k + c); alpha is
// row 0 of the real state (rows x k); uu is 1 x k. Columns with a nonzero status are left
// untouched.
#include "common.cl"

// (c, s, r) with [c s; -s c] [a; b] = [r; 0], r >= 0 (SciPy's _sym_ortho)
inline void sym_ortho(const real_type a, const real_type b, real_type* c, real_type* s, real_type* r)
{
    if (b == 0) {
        *c = a > 0 ? 1 : (a < 0 ? -1 : 0);
        *s = 0;
        *r = fabs(a);
    } else if (a == 0) {
        *c = 0;
        *s = b > 0 ? 1 : -1;
        *r = fabs(b);
    } else if (fabs(b) > fabs(a)) {
        const real_type tau = a / b;
        *s = (b > 0 ? 1 : -1) / sqrt(1 + tau * tau);
        *c = *s * tau;
        *r = b / *s;
    } else {
        const real_type tau = b / a;
        *c = (a > 0 ? 1 : -1) / sqrt(1 + tau * tau);
        *s = *c * tau;
        *r = a / *c;
    }
}

// SciPy's stopping tests of lsqr and lsmr on their estimates (test1 = ||r|| / ||b||, test2
// ~ ||A^H r|| / (||A|| ||r||), test3 ~ 1 / cond(A)), the later ones taking precedence: istop
// 1 to 7 (0: none holds)
inline int least_squares_istop(const real_type itn, const int iter_lim, const real_type test1,
                               const real_type test2, const real_type test3, const real_type anorm,
                               const real_type xnorm, const real_type bnorm, const real_type atol,
                               const real_type btol, const real_type ctol)
{
    const real_type t1 = test1 / (1 + anorm * xnorm / bnorm);
    const real_type rtol = btol + atol * anorm * xnorm / bnorm;
    int istop = 0;
    if (itn >= iter_lim) istop = 7;
    if (1 + test3 <= 1) istop = 6;
    if (1 + test2 <= 1) istop = 5;
    if (1 + t1 <= 1) istop = 4;
    if (test3 <= ctol) istop = 3;
    if (test2 <= atol) istop = 2;
    if (test1 <= rtol) istop = 1;
    return istop;
}

// The start of the bidiagonalization in column c from uu = u . u and vv = v . v (v = A^H u):
// beta = ||u||, alpha = ||v|| (0 where beta = 0); work-item i < size scales v_i = v_i / alpha
// (where alpha > 0) and returns it (0 past size). Lsqr's and Lsmr's initialize.
inline value_type start_bidiagonalization(const int i, const int size, const int c, __global const value_type* uu,
                                          __global const value_type* vv, __global value_type* v,
                                          real_type* alpha, real_type* beta)
{
    *beta = sqrt(fabs(real_part(uu[c])));
    *alpha = *beta > 0 ? sqrt(fabs(real_part(vv[c]))) : 0;
    if (i >= size) return 0;
    const value_type v_i = *alpha > 0 ? v[i] / *alpha : v[i];
    v[i] = v_i;
    return v_i;
}

// u = Av - alpha u (one work-item per entry of u)
__kernel void bidiagonalize_u(const int size, const int k, __global const value_type* Av,
                              __global value_type* u, __global const real_type* state,
                              __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    u[i] = Av[i] - state[c] * u[i];
}

// beta = sqrt(u . u);  where beta > 0: u = u / beta;  v = Atu / beta - beta v (work-items
// i < size_u for u, i < size_v for v)
__kernel void bidiagonalize_v(const int size_u, const int size_v, const int k,
                              __global value_type* u, __global value_type* v,
                              __global const value_type* Atu, __global const value_type* uu,
                              __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size_u && i >= size_v) return;
    const int c = COLUMN(i, k);
    if (status[c] != 0) return;
    const real_type beta = sqrt(fabs(real_part(uu[c])));
    if (!(beta > 0)) return;
    if (i < size_u) u[i] = u[i] / beta;
    if (i < size_v) v[i] = Atu[i] / beta - beta * v[i];
}
