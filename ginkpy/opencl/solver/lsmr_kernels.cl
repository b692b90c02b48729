// Kernels of Lsmr: the real state is rows x k (row r of column c at r * k + c; the ROW_
// defines come from LSMR_ROWS in core/solver/lsmr.py); v, h, hbar and x are n x k (entry
// (row, c) at row * k + c); uu, vv, xx, bb are 1 x k. initialize (state part), step_1 and
// step_2: one work-item per column; update: one per entry, in the running columns.
#include "components/golub_kahan_kernels.cl"

#define S(name) state[ROW_##name * k + c]

// beta = ||u||;  alpha = ||v|| (0 where beta = 0);  v = v / alpha;  h = v;  hbar = 0;  the
// scalars' start;  where alpha beta = 0: the column stops;  else where ||b|| = 0: x = 0, it
// stops (work-items i < size for the vectors, i < k for the state)
__kernel void initialize(const int size, const int k, const int rows, __global value_type* v,
                         __global value_type* h, __global value_type* hbar,
                         __global value_type* x, __global const value_type* bb,
                         __global const value_type* uu, __global const value_type* vv,
                         __global real_type* state, __global uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    real_type alpha, beta;
    const value_type v_i = start_bidiagonalization(i, size, c, uu, vv, v, &alpha, &beta);
    const real_type normb = sqrt(fabs(real_part(bb[c])));
    const bool exact = alpha * beta == 0;
    if (i < size) {
        h[i] = v_i;
        hbar[i] = 0;
        if (!exact && normb == 0) x[i] = 0;
    }
    if (i < k) {
        for (int r = 0; r < rows; ++r) state[r * k + c] = 0;
        S(ALPHA) = alpha;
        S(ALPHABAR) = alpha;
        S(RHO) = 1;
        S(RHOBAR) = 1;
        S(CBAR) = 1;
        S(RHODOLD) = 1;
        S(CONDA) = 1;
        S(ZETABAR) = alpha * beta;
        S(NORMAR) = alpha * beta;
        S(BETADD) = beta;
        S(NORMR) = beta;
        S(NORMA2) = alpha * alpha;
        S(NORMA) = alpha;
        S(MINRBAR) = sizeof(real_type) == 8 ? (real_type)1e100 : FLT_MAX;  // (SciPy: 1e100)
        S(NORMB) = normb;
        status[c] = exact || normb == 0 ? 1 : 0;
    }
}

// one work-item per column: SciPy's lsmr iteration after the bidiagonalization up to its
// tests: beta, alpha;  the rotations of the damping, of beta and of thetanew;  the
// coefficients of the updates;  the estimates of ||r||, ||A||, cond(A), ||A^H r||
__kernel void step_1(const int k, __global const value_type* uu, __global const value_type* vv,
                     __global real_type* state, __global const uchar* status, const real_type damp)
{
    const int c = get_global_id(0);
    if (c >= k || status[c] != 0) return;
    const real_type itn = S(ITN) + 1;
    const real_type beta = sqrt(fabs(real_part(uu[c])));
    real_type alpha = S(ALPHA), vscale = 1;
    if (beta > 0) {
        alpha = sqrt(fabs(real_part(vv[c])));
        if (alpha > 0) vscale = 1 / alpha;
    }
    real_type chat, shat, alphahat, cs, sn, rho, cbar, sbar, rhobar;
    sym_ortho(S(ALPHABAR), damp, &chat, &shat, &alphahat);
    const real_type rhoold = S(RHO);
    sym_ortho(alphahat, beta, &cs, &sn, &rho);
    const real_type thetanew = sn * alpha;
    const real_type rhobarold = S(RHOBAR), zetaold = S(ZETA);
    const real_type thetabar = S(SBAR) * rho;
    const real_type rhotemp = S(CBAR) * rho;
    sym_ortho(S(CBAR) * rho, thetanew, &cbar, &sbar, &rhobar);
    const real_type zetabar_old = S(ZETABAR);
    const real_type zeta = cbar * zetabar_old;
    const real_type zetabar = -sbar * zetabar_old;
    S(HBAR_SCALE) = -(thetabar * rho / (rhoold * rhobarold));
    S(X_COEF) = zeta / (rho * rhobar);
    S(H_SCALE) = -(thetanew / rho);
    // the estimate of ||r||
    const real_type betadd_old = S(BETADD);
    const real_type betaacute = chat * betadd_old, betacheck = -shat * betadd_old;
    const real_type betahat = cs * betaacute;
    const real_type betadd = -sn * betaacute;
    const real_type thetatildeold = S(THETATILDE);
    real_type ctildeold, stildeold, rhotildeold;
    sym_ortho(S(RHODOLD), thetabar, &ctildeold, &stildeold, &rhotildeold);
    const real_type thetatilde = stildeold * rhobar;
    const real_type rhodold = ctildeold * rhobar;
    const real_type betad = -stildeold * S(BETAD) + ctildeold * betahat;
    const real_type tautildeold = (zetaold - thetatildeold * S(TAUTILDEOLD)) / rhotildeold;
    const real_type taud = (zeta - thetatilde * tautildeold) / rhodold;
    const real_type d = S(D) + betacheck * betacheck;
    S(NORMR) = sqrt(d + (betad - taud) * (betad - taud) + betadd * betadd);
    // the estimates of ||A||, cond(A), ||A^H r||
    real_type norma2 = S(NORMA2) + beta * beta;
    S(NORMA) = sqrt(norma2);
    S(NORMA2) = norma2 + alpha * alpha;
    const real_type maxrbar = fmax(S(MAXRBAR), rhobarold);
    const real_type minrbar = itn > 1 ? fmin(S(MINRBAR), rhobarold) : S(MINRBAR);
    S(CONDA) = fmax(maxrbar, rhotemp) / fmin(minrbar, rhotemp);
    S(MAXRBAR) = maxrbar;
    S(MINRBAR) = minrbar;
    S(NORMAR) = fabs(zetabar);
    S(ITN) = itn;
    S(ALPHA) = alpha;
    S(VSCALE) = vscale;
    S(ALPHABAR) = cs * alpha;
    S(RHO) = rho;
    S(RHOBAR) = rhobar;
    S(CBAR) = cbar;
    S(SBAR) = sbar;
    S(ZETA) = zeta;
    S(ZETABAR) = zetabar;
    S(BETADD) = betadd;
    S(BETAD) = betad;
    S(THETATILDE) = thetatilde;
    S(RHODOLD) = rhodold;
    S(TAUTILDEOLD) = tautildeold;
    S(D) = d;
}

// in the running columns: v = vscale v;  hbar = h + hbar_scale hbar;  x = x + x_coef hbar;
// h = v + h_scale h
__kernel void update(const int size, const int k, __global value_type* v, __global value_type* h,
                     __global value_type* hbar, __global value_type* x,
                     __global const real_type* state, __global const uchar* status)
{
    const int i = get_global_id(0), c = COLUMN(i, k);
    if (!running_entry(i, c, size, status)) return;
    const value_type v_i = S(VSCALE) * v[i];
    const value_type h_i = h[i];
    const value_type hbar_i = h_i + S(HBAR_SCALE) * hbar[i];
    v[i] = v_i;
    hbar[i] = hbar_i;
    x[i] += S(X_COEF) * hbar_i;
    h[i] = v_i + S(H_SCALE) * h_i;
}

// one work-item per running column: normx = sqrt(x . x);  SciPy's tests, the later ones
// taking precedence;  where istop != 0 the column stops
__kernel void step_2(const int k, __global const value_type* xx, __global real_type* state,
                     __global uchar* status, const real_type atol, const real_type btol,
                     const real_type ctol, const int iter_lim)
{
    const int c = get_global_id(0);
    if (c >= k || status[c] != 0) return;
    const real_type normx = sqrt(fabs(real_part(xx[c])));
    const real_type normr = S(NORMR), norma = S(NORMA), normb = S(NORMB);
    const real_type test1 = normr / normb;
    const real_type test2 = norma * normr != 0 ? S(NORMAR) / (norma * normr) : INFINITY;
    const real_type test3 = 1 / S(CONDA);
    const int istop = least_squares_istop(S(ITN), iter_lim, test1, test2, test3, norma, normx,
                                          normb, atol, btol, ctol);
    S(NORMX) = normx;
    S(ISTOP) = istop;
    if (istop != 0) status[c] = 1;
}
