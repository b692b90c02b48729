// Kernels of Lsqr: the real state is rows x k (row r of column c at r * k + c; the ROW_
// defines come from LSQR_ROWS in core/solver/lsqr.py); v, w, x and var are n x k (entry
// (row, c) at row * k + c); uu, vv, ww, bb are 1 x k. initialize and step: one work-item per
// column; update: one per entry, in the columns that ran the iteration (ACTIVE).
#include "components/golub_kahan_kernels.cl"

#define S(name) state[ROW_##name * k + c]

// beta = ||u||;  alpha = ||v|| (0 where beta = 0);  v = v / alpha;  w = v;  rhobar = alpha;
// phibar = r1norm = r2norm = beta;  bnorm = ||b||;  arnorm = alpha beta;  cs2 = -1;  where
// arnorm = 0: istop 0, the column stops (work-items i < size for the vectors, i < k for the state)
__kernel void initialize(const int size, const int k, const int rows, __global value_type* v,
                         __global value_type* w, __global const value_type* bb,
                         __global const value_type* uu, __global const value_type* vv,
                         __global real_type* state, __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    real_type alpha, beta;
    const value_type v_i = start_bidiagonalization(i, size, c, uu, vv, v, &alpha, &beta);
    if (i < size) w[i] = v_i;
    if (i < k) {
        for (int r = 0; r < rows; ++r) state[r * k + c] = 0;
        S(ALPHA) = alpha;
        S(RHOBAR) = alpha;
        S(PHIBAR) = beta;
        S(R1NORM) = beta;
        S(R2NORM) = beta;
        S(BNORM) = sqrt(fabs(real_part(bb[c])));
        S(ARNORM) = alpha * beta;
        S(CS2) = -1;
        status[c] = alpha * beta == 0 ? 1 : 0;
    }
}

// step (lsqr_step: OpenCL has a builtin step): one work-item per column, SciPy's lsqr
// iteration after the bidiagonalization: beta, alpha,
// anorm;  the rotations of the damping and of beta;  t1 = phi / rho, t2 = -theta / rho;  the
// estimates of ||x||, cond(A), ||r||, ||A^H r||;  istop, the column stops where it is nonzero
__kernel void lsqr_step(const int k, __global const value_type* uu, __global const value_type* vv,
                   __global const value_type* ww, __global real_type* state,
                   __global uchar* status, const real_type damp, const real_type atol,
                   const real_type btol, const real_type ctol, const int iter_lim)
{
    const int c = get_global_id(0);
    if (c >= k) return;
    S(ACTIVE) = status[c] == 0 ? 1 : 0;
    if (status[c] != 0) return;
    const real_type dampsq = damp * damp;
    const real_type itn = S(ITN) + 1;
    const real_type beta = sqrt(fabs(real_part(uu[c])));
    const real_type alpha_old = S(ALPHA);
    real_type alpha = alpha_old, vscale = 1, anorm = S(ANORM);
    if (beta > 0) {
        anorm = sqrt(anorm * anorm + alpha_old * alpha_old + beta * beta + dampsq);
        alpha = sqrt(fabs(real_part(vv[c])));
        if (alpha > 0) vscale = 1 / alpha;
    }
    real_type rhobar = S(RHOBAR), phibar = S(PHIBAR), psi = 0;
    if (damp > 0) {
        const real_type rhobar1 = sqrt(rhobar * rhobar + dampsq);
        psi = damp / rhobar1 * phibar;
        phibar = rhobar / rhobar1 * phibar;
        rhobar = rhobar1;
    }
    real_type cs, sn, rho;
    sym_ortho(rhobar, beta, &cs, &sn, &rho);
    const real_type theta = sn * alpha;
    const real_type phi = cs * phibar;
    phibar = sn * phibar;
    const real_type tau = sn * phi;
    S(RHOBAR) = -cs * alpha;
    S(PHIBAR) = phibar;
    S(T1) = phi / rho;
    S(T2) = -theta / rho;
    S(INV_RHO) = 1 / rho;
    const real_type ddnorm = S(DDNORM) + fabs(real_part(ww[c])) / (rho * rho);
    // a rotation on the right eliminates theta: the estimate of ||x||
    const real_type delta = S(SN2) * rho, gambar = -S(CS2) * rho;
    const real_type rhs = phi - delta * S(Z);
    const real_type zbar = rhs / gambar;
    const real_type xnorm = sqrt(S(XXNORM) + zbar * zbar);
    const real_type gamma = sqrt(gambar * gambar + theta * theta);
    const real_type z = rhs / gamma;
    const real_type xxnorm = S(XXNORM) + z * z;
    S(CS2) = gambar / gamma;
    S(SN2) = theta / gamma;
    S(Z) = z;
    // cond(Abar), ||rbar||, ||Abar^H rbar||
    const real_type acond = anorm * sqrt(ddnorm);
    const real_type res2 = S(RES2) + psi * psi;
    const real_type rnorm = sqrt(phibar * phibar + res2);
    const real_type arnorm = alpha * fabs(tau);
    const real_type r1sq = rnorm * rnorm - dampsq * xxnorm;
    S(R1NORM) = damp > 0 ? copysign(sqrt(fabs(r1sq)), r1sq) : rnorm;
    S(R2NORM) = rnorm;
    S(ALPHA) = alpha;
    S(VSCALE) = vscale;
    S(ANORM) = anorm;
    S(DDNORM) = ddnorm;
    S(XNORM) = xnorm;
    S(XXNORM) = xxnorm;
    S(ACOND) = acond;
    S(RES2) = res2;
    S(ARNORM) = arnorm;
    S(ITN) = itn;
    // SciPy's tests
    const real_type test2 = arnorm / (anorm * rnorm + EPSILON);
    const int istop = least_squares_istop(itn, iter_lim, rnorm / S(BNORM), test2,
                                          1 / (acond + EPSILON), anorm, xnorm, S(BNORM), atol,
                                          btol, ctol);
    S(ISTOP) = istop;
    if (istop != 0) status[c] = 1;
}

// in the columns that ran the iteration: v = vscale v;  x = x + t1 w;  var = var + |inv_rho w|^2
// (with CALC_VAR);  w = v + t2 w
__kernel void update(const int size, const int k, __global value_type* v, __global value_type* w,
                     __global value_type* x, __global value_type* var,
                     __global const real_type* state)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (S(ACTIVE) == 0) return;
    const value_type v_i = S(VSCALE) * v[i];
    const value_type w_i = w[i];
    v[i] = v_i;
    x[i] += S(T1) * w_i;
#if CALC_VAR
    const real_type d = S(INV_RHO);
    var[i] += to_value(d * d * abs2(w_i));
#endif
    w[i] = v_i + S(T2) * w_i;
}
