// Kernels of Gmres and CbGmres. Vectors are n x k row-major (entry (row, c) at row * k + c);
// the Krylov basis holds basis vector i at basis + i * stride (stride = n k), normalized, in
// the storage type of components/krylov_basis.cl (the value type for Gmres); h_{i,j} of column c
// is hessenberg[i * hess_stride + j * k + c] (hess_stride = m k); g, cos and sin hold entry i of
// column c at i * k + c. Inner iteration j: the product w = A v, then multi_dot (v_j = v / ||v||
// into the basis, the dot products V^H w and w^H w: one pass over the basis), orthogonalize (w' =
// w / ||v|| - V h into v: the second pass), reorthogonalize (the DGKS correction, in columns
// that need it: otherwise nothing; "cgs2", and "mgs" where local memory does not hold the lag), or
// with LAGGED ("mgs", whatever the basis's storage type) that correction made by the next
// multi_dot (givens at the end of a cycle):
// three launches an inner iteration with the product. Every kernel runs in the reduction layout (REDUCTION_LAYOUT).
// They read j from the device, step[parity] (restart sets step[0] = 0, multi_dot step[1 - parity]
// = j + 1, iteration j having parity j % 2), and keep their partial sums at a stride of m + 2 (h)
// or m + 1 (h2) per column: so the launches of every inner iteration are the same but for their
// parity, and a captured iteration replays for every j.
#include "common.cl"
#include "components/krylov_basis.cl"

#define SINGULAR 100  // a rotated diagonal below SINGULAR eps of its column's norm: H is rank-deficient

// The DGKS test (Daniel, Gragg, Kaufman, Stewart): the second pass runs where the first left
// ||w'||^2 = ||w||^2 - ||h||^2 <= eta2 ||w||^2 (w lost most of its norm to the basis, so rounding
// may have left w' far from orthogonal to it). eta2 is the launch's (core/solver/gmres.py,
// ORTHO_ETA2 by ortho_method): -INFINITY never (classical Gram-Schmidt), INFINITY always (CGS2),
// 0.05 the default's.

// The Givens step of Hessenberg column j of column c (running): h_{j+1,j} = nrm; rotations
// 0..j-1 applied; rotation j zeroes h_{j+1,j}; g_{j+1} = -conj(sin_j) g_j, g_j = cos_j g_j;
// the estimate |g_{j+1}| checked (PENDING on convergence); inner = j + 1. A column whose
// residual is 0 already (g_j = 0) idles (its estimate 0 checked); a rank-deficient H is a
// breakdown. Rotation i is [cos_i sin_i; -conj(sin_i) conj(cos_i)] with cos_i = conj(a) / d,
// sin_i = conj(b) / d, d = sqrt(|a|^2 + |b|^2), which takes (a, b) to (d, 0) (for real values
// the usual [c s; -s c]).
inline void givens_step(const int j, const int c, const int k, const int hess_stride,
                        const real_type nrm, __global value_type* hessenberg,
                        __global value_type* g, __global value_type* cos_,
                        __global value_type* sin_, __global int* inner, STOP_PARAMS)
{
    if (status[c] != STATUS_RUNNING) return;
    if (is_zero(g[j * k + c])) {
        stop_check_as(c, k, 0, true, STATUS_PENDING, STOP_ARGS);
        return;
    }
    __global value_type* h = hessenberg + j * k + c;  // h[i * hess_stride] = h_{i,j}
    h[(j + 1) * hess_stride] = to_value(nrm);
    real_type norm2 = nrm * nrm;
    for (int i = 0; i <= j; ++i) norm2 += abs2(h[i * hess_stride]);
    for (int i = 0; i < j; ++i) {
        const value_type ci = cos_[i * k + c];
        const value_type si = sin_[i * k + c];
        const value_type a = h[i * hess_stride];
        const value_type b = h[(i + 1) * hess_stride];
        h[i * hess_stride] = mul(ci, a) + mul(si, b);
        h[(i + 1) * hess_stride] = -mul(conj_value(si), a) + mul(conj_value(ci), b);
    }
    const value_type a = h[j * hess_stride];
    const value_type b = h[(j + 1) * hess_stride];
    const real_type diag = hypot(abs_value(a), abs_value(b));
    if (!(diag > SINGULAR * EPSILON * sqrt(norm2))) {
        status[c] = STATUS_BREAKDOWN;
        return;
    }
    const value_type cj = conj_value(a) / diag;
    const value_type sj = conj_value(b) / diag;
    cos_[j * k + c] = cj;
    sin_[j * k + c] = sj;
    h[j * hess_stride] = to_value(diag);
    h[(j + 1) * hess_stride] = 0;
    const value_type gj = g[j * k + c];
    const value_type g_next = -mul(conj_value(sj), gj);
    g[(j + 1) * k + c] = g_next;
    g[j * k + c] = mul(cj, gj);
    inner[c] = j + 1;
    stop_check_as(c, k, abs_value(g_next), true, STATUS_PENDING, STOP_ARGS);
}

// The true residual's norm ||r|| (sum of rr): the first check (no check yet), or the
// confirmation of a column PENDING; then in running columns v = r / ||r|| and g_0 = ||r||;
// inner = 0 in every column, and the cycle's inner iteration step[0] = 0. Work-groups other than the writer may read a column's status
// before the writer's first check stops it and its check count after: they then write v of that
// stopped column, which nothing reads (the verdict, g and inner are the writer's alone).
__kernel void restart(REDUCTION_PARAMS, __global const value_type* r,
                      __global const value_type* rr, const int rr_parts, __global value_type* v,
                      __global value_type* g, __global int* inner, __global int* step, STOP_PARAMS,
                      __local value_type* sums, __local value_type* tmp)
{
    if (get_group_id(0) == 0 && get_group_id(1) == 0 && get_local_id(0) == 0) step[0] = 0;
    sum_partials(rr, rr_parts, k, sums, tmp);
    REDUCTION_LAYOUT;
    if (col >= k) return;
    const bool writer = group == 0 && y_ == 0;
    const real_type nrm = sqrt(real_part(sums[col]));
    const uchar st = status[col];
    bool running;
    if (st == STATUS_RUNNING && checks[col] == 0) {
        running = stop_check(col, k, nrm, writer, STOP_ARGS);
    } else if (st == STATUS_PENDING) {
        running = stop_confirm(col, k, nrm, writer, STOP_ARGS);
    } else {
        running = st == STATUS_RUNNING;
    }
    if (writer) {
        inner[col] = 0;
        if (running) g[col] = to_value(nrm);
    }
    if (!running) return;
    const real_type inv = nrm != 0 ? 1 / nrm : 0;
    for (int row = begin; row < end; row += lanes) v[row * k + col] = r[row * k + col] * inv;
}

// Left preconditioning (SciPy's gmres), z = M r: the true residual's norm ||r|| (sum of rr) as
// in restart, and in a column whose cycle ran its length (RUNNING) checked too: converged where it
// meets the threshold (the estimate of ||M r|| need not have); then SciPy's inner tolerance ptol = ||M r|| min(f, thr / ||r||) (||M r||: sum of zz),
// f per column in `factor`: 1 at the first check, x0.25 (at least EPSILON) after a cycle whose
// estimate met ptol (PENDING) but whose true residual did not, else x1.5 (at most 1). The cycle
// runs on g scaled by s = thr / ptol, so that the estimate |g_{j+1}| <= thr is SciPy's
// presid <= ptol and reads as a true residual: g_0 = ||M r|| s = max(thr / f, ||r||), and
// unscale = 1 / s = ||M r|| / g_0 for the update. v = z / ||z|| in running columns; inner = 0;
// step[0] = 0. ||M r|| zero or not finite where ||r|| > 0: a breakdown. factor, g, unscale and the
// verdict are the writer's alone (the other work-groups only normalize v, as in restart).
__kernel void restart_left(REDUCTION_PARAMS, __global const value_type* z,
                           __global const value_type* rr, const int rr_parts,
                           __global const value_type* zz, const int zz_parts, __global value_type* v,
                           __global value_type* g, __global value_type* unscale,
                           __global real_type* factor, __global int* inner, __global int* step,
                           STOP_PARAMS, __local value_type* sums, __local value_type* tmp)
{
    if (get_group_id(0) == 0 && get_group_id(1) == 0 && get_local_id(0) == 0) step[0] = 0;
    sum_partials(rr, rr_parts, k, sums, tmp);
    sum_partials(zz, zz_parts, k, sums + k, tmp);
    REDUCTION_LAYOUT;
    if (col >= k) return;
    const bool writer = group == 0 && y_ == 0;
    const real_type nrm = sqrt(real_part(sums[col]));
    const real_type znrm = sqrt(real_part(sums[k + col]));
    const uchar st = status[col];
    const bool first = checks[col] == 0;
    bool running;
    if (st == STATUS_RUNNING && first) {
        running = stop_check(col, k, nrm, writer, STOP_ARGS);
    } else if (st == STATUS_PENDING) {
        running = stop_confirm(col, k, nrm, writer, STOP_ARGS);
    } else if (st == STATUS_RUNNING && nrm <= threshold[col]) {
        // a cycle that ran its length: the true residual met the criterion where the estimate
        // of ||M r|| did not (SciPy checks it at every restart); its norm replaces the estimate
        running = false;
        if (writer) {
            history[((checks[col] - 1) % history_rows) * k + col] = nrm;
            status[col] = STATUS_CONVERGED;
        }
    } else {
        running = st == STATUS_RUNNING;
    }
    const bool usable = isfinite(znrm) && znrm > 0;
    if (writer) {
        inner[col] = 0;
        const real_type f = first ? 1 : st == STATUS_PENDING ? fmax((real_type)EPSILON, (real_type)0.25 * factor[col])
                                                              : fmin((real_type)1, (real_type)1.5 * factor[col]);
        factor[col] = f;
        if (running && nrm > 0 && !usable) {
            status[col] = STATUS_BREAKDOWN;
        } else if (running) {
            const real_type thr = threshold[col];
            const real_type g0 = fmax(thr > 0 ? thr / f : (real_type)0, nrm);
            g[col] = to_value(g0);
            unscale[col] = to_value(g0 > 0 ? znrm / g0 : 0);
        }
    }
    if (!running) return;
    const real_type inv = usable ? 1 / znrm : 0;
    for (int row = begin; row < end; row += lanes) v[row * k + col] = z[row * k + col] * inv;
}

// The lagged second pass (LAGGED: Gmres's "mgs"): the DGKS pass of step j - 1, which orthogonalize
// asked for in the columns whose reorth flag it set (h2: its partial sums of V_{0..j-1}^H w'),
// made by the next kernel instead of a launch of its own. Any flag set: the work-group sums h2
// into sums[k ..] (rows of the partials (m + 1) k; every work-group where any column asks, so
// that each has the sums of the columns it rotates and of those it updates); then per column
// ||w''||^2 = ||w'||^2 - ||h2||^2 (Pythagoras: w' = w'' + V h2 with w'' orthogonal to V).
inline bool lagged_sums(const int j, const int k, const int hess_stride, __global const value_type* h2,
                        const int h2_parts, __global const uchar* reorth, __local value_type* sums,
                        __local value_type* red)
{
    bool any = false;
    for (int c = 0; c < k; ++c) any |= reorth[c] != 0;
    // (a loop with no turn where no flag is set: no barrier in a branch)
    sum_partials_strided(h2, h2_parts, hess_stride + k, any && j > 0 ? j * k : 0, sums + k, red);
    return any;
}

inline real_type lagged_norm(const int j, const int k, const int c, const bool again, __local const value_type* sums)
{
    real_type norm2 = real_part(sums[c]);
    if (again) {
        for (int l = 0; l < j; ++l) norm2 -= abs2(sums[(l + 1) * k + c]);
    }
    return sqrt(fmax(norm2, (real_type)0));
}

// H[0:j, j - 1] += h2 of column c (the lagged pass of step j - 1; before its Givens step).
inline void lagged_hessenberg(const int j, const int k, const int c, const int hess_stride,
                              __local const value_type* sums, __global const uchar* reorth,
                              __global const uchar* status, __global value_type* hessenberg)
{
    if (reorth[c] && status[c] == STATUS_RUNNING) {
        for (int l = 0; l < j; ++l) hessenberg[l * hess_stride + (j - 1) * k + c] += sums[(l + 1) * k + c];
    }
}

// The first pass over the basis, inner iteration j = step[parity] (w = A v): nrm = ||v|| (the sum
// of ww, the partial sums of ||w'||^2 of the last orthogonalization; for j = 0 1, v_0 being
// normalized, and 0 in stopped columns), into nrm_out; v_j = v / nrm into the basis (in its storage type), with FLEXIBLE
// (flexible GMRES) also z_j = z / nrm, z = M v, into zbasis (in the value type); then the partial
// sums of conj(v_l) . w, l = 0..j (v_j as stored), and of w . w, partial[group, l k + c] for l <=
// j + 1 (rows of (m + 2) k); step[1 - parity] = j + 1. With `rotate` (and j > 0) the work-groups
// first take the Givens step of Hessenberg column j - 1, one column each in turn (h_{j,j-1} =
// ||v||). With LAGGED, first the lagged second pass of step j - 1 (j > 0) where reorth asks:
// H[0:j, j - 1] += h2 (with the rotation), v'' = v - V h2, z'' = z - Z h2 (FLEXIBLE), nrm =
// ||v''||, and w = A M v'' (into w: orthogonalize reads it) from the Arnoldi relation, without
// another vector: A M V h2 = V c + h2_{j-1} v'' with c = H h2 (H unrotated: column j - 1 raw's,
// orthogonalize's first pass, + h2; the columns before final's, which this kernel keeps:
// final[:, j - 1] = (raw + h2, nrm)), so w = w - V c - h2_{j-1} v'' in the same read of V.
__kernel void multi_dot(REDUCTION_PARAMS, __global int* step, const int parity, const int rotate,
                        const int hess_stride, const int stride, __global const value_type* v,
                        __global storage_type* basis, __global const value_type* z,
                        __global value_type* zbasis, __global value_type* w,
                        __global const value_type* ww, const int ww_parts,
                        __global value_type* nrm_out, __global value_type* partial,
                        __global value_type* hessenberg, __global value_type* g,
                        __global value_type* cos_, __global value_type* sin_, __global int* inner,
                        STOP_PARAMS, __local value_type* sums, __local value_type* red
#if LAGGED
                        , __global const value_type* raw, __global value_type* final_,
                        __global const value_type* h2, const int h2_parts, __global const uchar* reorth
#endif
                        )
{
    const int j = step[parity];
    const int num = j + 1;
    const int row_stride = hess_stride + 2 * k;  // (m + 2) k
    sum_partials(ww, j > 0 ? ww_parts : 0, k, sums, red);
#if LAGGED
    const bool any = lagged_sums(j, k, hess_stride, h2, h2_parts, reorth, sums, red) && j > 0;
    // c = H[0:j, 0:j] h2 into sums[(m + 1) k ..]: column j - 1 of H is raw's + h2, the others final's
    __local value_type* c_sums = sums + hess_stride + k;
    const int size = get_local_size(0) * get_local_size(1);
    const int lid = get_local_id(1) * get_local_size(0) + get_local_id(0);
    for (int e = lid; e < (any ? j * k : 0); e += size) {
        const int i = e / k, c = e % k;
        value_type s = mul(raw[i * hess_stride + (j - 1) * k + c] + sums[(i + 1) * k + c], sums[j * k + c]);
        for (int l = max(i - 1, 0); l < j - 1; ++l) s += mul(final_[i * hess_stride + l * k + c], sums[(l + 1) * k + c]);
        c_sums[e] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j > 0 && get_group_id(0) == 0 && get_group_id(1) == 0 && lid == 0) {
        // the Arnoldi relation's column j - 1 after both passes, for the lagged passes to come
        for (int c = 0; c < k; ++c) {
            const bool again = any && reorth[c];
            for (int i = 0; i < j; ++i) {
                final_[i * hess_stride + (j - 1) * k + c] =
                    raw[i * hess_stride + (j - 1) * k + c] + (again ? sums[(i + 1) * k + c] : 0);
            }
            final_[j * hess_stride + (j - 1) * k + c] = to_value(lagged_norm(j, k, c, again, sums));
        }
    }
#endif
    if (rotate && j > 0 && get_local_id(0) == 0) {
        const int groups = get_num_groups(0) * get_num_groups(1);
        for (int c = get_group_id(1) * get_num_groups(0) + get_group_id(0); c < k; c += groups) {
#if LAGGED
            lagged_hessenberg(j, k, c, hess_stride, sums, reorth, status, hessenberg);
            const real_type norm = lagged_norm(j, k, c, any && reorth[c], sums);
#else
            const real_type norm = sqrt(real_part(sums[c]));
#endif
            givens_step(j - 1, c, k, hess_stride, norm, hessenberg, g, cos_, sin_, inner, STOP_ARGS);
        }
    }
    REDUCTION_LAYOUT;
    if (col < k) {
        // (j = 0: v_0 normalized by the restart in running columns; a stopped column's v is its
        // last w', which it would otherwise carry on as v_0, growing by ||A|| each cycle: 0 there)
#if LAGGED
        const bool again = any && reorth[col];
        const real_type nrm = j > 0 ? lagged_norm(j, k, col, again, sums) : (status[col] == STATUS_RUNNING ? 1 : 0);
#else
        const real_type nrm = j > 0 ? sqrt(real_part(sums[col])) : (status[col] == STATUS_RUNNING ? 1 : 0);
#endif
        const real_type inv = nrm > 0 ? 1 / nrm : 0;
        if (group == 0 && y_ == 0) nrm_out[col] = to_value(nrm);
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type v_i = v[i];
#if FLEXIBLE
            value_type z_i = z[i];
#endif
#if LAGGED
            if (again) {
                value_type w_i = w[i];
                for (int l = 0; l < j; ++l) {
                    const value_type coef = sums[(l + 1) * k + col];
                    const value_type v_l = load_basis(basis, l * stride + i);
                    v_i -= mul(coef, v_l);
                    w_i -= mul(c_sums[l * k + col], v_l);
#if FLEXIBLE
                    z_i -= mul(coef, zbasis[l * stride + i]);
#endif
                }
                w[i] = w_i - mul(sums[j * k + col], v_i);
            }
#endif
            store_basis(basis, j * stride + i, v_i * inv);
#if FLEXIBLE
            zbasis[j * stride + i] = z_i * inv;
#endif
        }
    }
    if (get_group_id(0) == 0 && group == 0 && get_local_id(0) == 0) step[1 - parity] = j + 1;
    // (each work-item reads back only the entries of v_j and w it wrote)
#if CPU_LAYOUT
    cpu_basis_dots(num, true, k, col, begin, end, group, basis, stride, w, partial, row_stride);
#else
    for (int first = 0; first <= num; first += DOTS) {
        basis_dots(first, num, true, LAYOUT_ARGS, basis, stride, w, partial, row_stride, red);
    }
#endif
}

// Whether column c needs the second pass, from the sums of multi_dot (dots[l k + c], l <= j + 1):
// ||w||^2 - ||h||^2 <= eta2 ||w||^2 (both sides scaled by 1 / nrm^2, which cancels).
inline bool second_pass(__local const value_type* dots, const int k, const int j, const int c,
                        const real_type eta2)
{
    const real_type before = real_part(dots[(j + 1) * k + c]);
    real_type h_sq = 0;
    for (int l = 0; l <= j; ++l) h_sq += abs2(dots[l * k + c]);
    return !(before - h_sq > eta2 * before);
}

// The second pass over the basis, inner iteration j = step[parity]: with h_l = (conj(v_l) . w) /
// nrm (the sums of multi_dot's partial sums h) and nrm from multi_dot, w' = w / nrm - V h into v
// (in the GPU layout UPDATE_ROWS rows per turn of a work-item's loop: a per-device choice),
// H[0:j+1, j] = h in running columns, the partial sums of ||w'||^2 into ww, and the DGKS test into
// reorth: where it asks for a second pass, also the partial sums h2 of V^H w' (rows of (m + 1) k;
// its dot products, read again from the basis by the work-groups that have such a column).
__kernel void orthogonalize(REDUCTION_PARAMS, __global const int* step, const int parity,
                            const int hess_stride, const int stride,
                            __global const storage_type* basis, __global const value_type* w,
                            __global const value_type* nrm, __global const value_type* h,
                            const int h_parts, __global value_type* hessenberg,
                            __global value_type* v, __global value_type* ww,
                            __global value_type* h2, __global uchar* reorth, const real_type eta2,
                            __global const uchar* status, __local value_type* sums,
                            __local value_type* red
#if LAGGED
                            , __global value_type* raw
#endif
                            )
{
    const int j = step[parity];
    const int num = j + 1;
    sum_partials_strided(h, h_parts, hess_stride + 2 * k, (num + 1) * k, sums, red);
    REDUCTION_LAYOUT;
    const int c = col < k ? col : 0;
    const real_type norm = real_part(nrm[c]);
    const real_type inv = norm > 0 ? 1 / norm : 0;
    const bool again = col < k && second_pass(sums, k, j, c, eta2);
    // whether a column of this work-group needs the second pass's dot products (the same for
    // all its work-items: barriers follow)
    const bool group_again = local_sum_int((__local int*)red, again, get_local_id(0), get_local_size(0), 1) > 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    value_type s = 0;
#if CPU_LAYOUT
    if (col < k) s = to_value(cpu_basis_update(num, sums, inv, k, col, begin, end, basis, stride, w, v));
#else
    if (col < k) {
        int row = begin;
#if UPDATE_ROWS > 1
        // UPDATE_ROWS rows per turn (rows row + t lanes): more loads in flight per work-item; each
        // row's sums and s in the order of the loop below, so the same values to the last bit
        for (; row + (UPDATE_ROWS - 1) * lanes < end; row += UPDATE_ROWS * lanes) {
            value_type a0[UPDATE_ROWS], a1[UPDATE_ROWS];
            for (int t = 0; t < UPDATE_ROWS; ++t) {
                a0[t] = w[(row + t * lanes) * k + col];
                a1[t] = 0;
            }
            int l = 0;
            for (; l + 1 < num; l += 2) {
                const value_type h0 = sums[l * k + col], h1 = sums[(l + 1) * k + col];
                for (int t = 0; t < UPDATE_ROWS; ++t) {
                    const int i = (row + t * lanes) * k + col;
                    a0[t] -= mul(h0, load_basis(basis, l * stride + i));
                    a1[t] -= mul(h1, load_basis(basis, (l + 1) * stride + i));
                }
            }
            for (int t = 0; t < UPDATE_ROWS; ++t) {
                const int i = (row + t * lanes) * k + col;
                if (l < num) a0[t] -= mul(sums[l * k + col], load_basis(basis, l * stride + i));
                const value_type w_i = (a0[t] + a1[t]) * inv;
                v[i] = w_i;
                s += to_value(abs2(w_i));
            }
        }
#endif
        for (; row < end; row += lanes) {
            const int i = row * k + col;
            // (two sums: half the dependent chain per row)
            value_type a0 = w[i], a1 = 0;
            int l = 0;
            for (; l + 1 < num; l += 2) {
                a0 -= mul(sums[l * k + col], load_basis(basis, l * stride + i));
                a1 -= mul(sums[(l + 1) * k + col], load_basis(basis, (l + 1) * stride + i));
            }
            if (l < num) a0 -= mul(sums[l * k + col], load_basis(basis, l * stride + i));
            const value_type w_i = (a0 + a1) * inv;
            v[i] = w_i;
            s += to_value(abs2(w_i));
        }
    }
#endif
    s = REDUCE_LANES(s, red);
    if (IS_LANE_ROOT) ww[group * k + col] = s;
    if (col < k && group == 0 && y_ == 0) {
        reorth[col] = again;
        if (status[col] == STATUS_RUNNING) {
            for (int l = 0; l < num; ++l) hessenberg[l * hess_stride + j * k + col] = sums[l * k + col] * inv;
#if LAGGED
            for (int l = 0; l < num; ++l) raw[l * hess_stride + j * k + col] = sums[l * k + col] * inv;
#endif
        }
    }
    // (each work-item reads back only the entries of v it wrote; no barrier in a branch: PoCL)
    barrier(CLK_LOCAL_MEM_FENCE);
#if CPU_LAYOUT
    if (group_again) cpu_basis_dots(num, false, k, col, begin, end, group, basis, stride, v, h2, hess_stride + k);
#else
    for (int first = 0; first < (group_again ? num : 0); first += DOTS) {
        basis_dots(first, num, false, LAYOUT_ARGS, basis, stride, v, h2, hess_stride + k, red);
    }
#endif
}

// The DGKS second pass, inner iteration j = step[parity], in the columns whose reorth flag is set: w'' = w' -
// V h2 (h2: the sums of orthogonalize's partial sums) into v, H[0:j+1, j] += h2 in running
// columns, and the partial sums of ||w''||^2 into ww in place of orthogonalize's. Work-groups
// without such a column only read the flags.
__kernel void reorthogonalize(REDUCTION_PARAMS, __global const int* step, const int parity,
                              const int hess_stride, const int stride,
                              __global const storage_type* basis, __global value_type* v,
                              __global const value_type* h2, const int h2_parts,
                              __global value_type* hessenberg, __global const uchar* reorth,
                              __global const uchar* status, __global value_type* ww,
                              __local value_type* sums, __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    bool group_again = false;
    for (int c = get_group_id(0) * width; c < min(k, (int)get_group_id(0) * width + width); ++c) {
        group_again |= reorth[c] != 0;
    }
    const int j = step[parity];
    const int num = j + 1;
    const bool again = col < k && reorth[col];
    // the sums only in work-groups with such a column (a loop with no turn elsewhere: no barrier
    // in a branch, which PoCL mistranslates)
    sum_partials_strided(h2, h2_parts, hess_stride + k, group_again ? num * k : 0, sums, tmp);
    value_type s = 0;
#if CPU_LAYOUT
    if (again) s = to_value(cpu_basis_update(num, sums, 1, k, col, begin, end, basis, stride, v, v));
#else
    if (again) {
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type v_i = v[i];
            for (int l = 0; l < num; ++l) v_i -= mul(sums[l * k + col], load_basis(basis, l * stride + i));
            v[i] = v_i;
            s += to_value(abs2(v_i));
        }
    }
#endif
    s = REDUCE_LANES(s, tmp);
    if (IS_LANE_ROOT && again) ww[group * k + col] = s;
    if (again && group == 0 && y_ == 0 && status[col] == STATUS_RUNNING) {
        for (int l = 0; l < num; ++l) hessenberg[l * hess_stride + j * k + col] += sums[l * k + col];
    }
}

// One work-group: the Givens step of Hessenberg column j in every running column,
// h_{j+1,j} = ||w'|| from the partial sums ww; with LAGGED first the lagged second pass of step j
// in the Hessenberg matrix (H[0:j+1, j] += h2, h_{j+1,j} = ||w''||) where reorth asks.
__kernel void givens(const int k, const int j, const int hess_stride,
                     __global const value_type* ww, const int ww_parts,
                     __global value_type* hessenberg, __global value_type* g,
                     __global value_type* cos_, __global value_type* sin_, __global int* inner,
                     STOP_PARAMS, __local value_type* sums, __local value_type* tmp
#if LAGGED
                     , __global const value_type* h2, const int h2_parts, __global const uchar* reorth
#endif
                     )
{
    sum_partials(ww, ww_parts, k, sums, tmp);
#if LAGGED
    const bool any = lagged_sums(j + 1, k, hess_stride, h2, h2_parts, reorth, sums, tmp);
#endif
    for (int c = get_local_id(0); c < k; c += get_local_size(0)) {
#if LAGGED
        lagged_hessenberg(j + 1, k, c, hess_stride, sums, reorth, status, hessenberg);
        const real_type norm = lagged_norm(j + 1, k, c, any && reorth[c], sums);
#else
        const real_type norm = sqrt(real_part(sums[c]));
#endif
        givens_step(j, c, k, hess_stride, norm, hessenberg, g, cos_, sin_, inner, STOP_ARGS);
    }
}

// y = R^-1 g per column (R the leading inner x inner triangle of H; each work-group solves it
// in local memory, one work-item per column), then x += V y, or x += diag (V y) with DIAGONAL:
// one pass over the basis.
__kernel void update(REDUCTION_PARAMS, const int m, const int hess_stride, const int stride,
                     __global const storage_type* basis, __global const value_type* hessenberg,
                     __global const value_type* g, __global const int* inner,
                     __global const value_type* diag, __global value_type* x,
                     __local value_type* y)
{
    for (int c = get_local_id(0); c < k; c += get_local_size(0)) {
        for (int i = inner[c] - 1; i >= 0; --i) {
            value_type value = g[i * k + c];
            for (int l = i + 1; l < inner[c]; ++l) {
                value -= mul(hessenberg[i * hess_stride + l * k + c], y[l * k + c]);
            }
            y[i * k + c] = divide(value, hessenberg[i * hess_stride + i * k + c]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    REDUCTION_LAYOUT;
    if (col >= k) return;
    const int used = inner[col];
#if CPU_LAYOUT
    value_type buf[CPU_BLOCK];
    for (int r0 = begin; r0 < end; r0 += CPU_BLOCK) {
        const int len = min(end - r0, CPU_BLOCK);
        for (int r = 0; r < len; ++r) buf[r] = 0;
        for (int l = 0; l < used; ++l) {
            const value_type c = y[l * k + col];
            const int offset = l * stride + r0 * k + col;
            for (int r = 0; r < len; ++r) buf[r] += mul(c, load_basis(basis, offset + r * k));
        }
        for (int r = 0; r < len; ++r) {
#if DIAGONAL
            x[(r0 + r) * k + col] += mul(diag[r0 + r], buf[r]);
#else
            x[(r0 + r) * k + col] += buf[r];
#endif
        }
    }
#else
    for (int row = begin; row < end; row += lanes) {
        const int i = row * k + col;
        value_type value = 0;
        for (int l = 0; l < used; ++l) value += mul(y[l * k + col], load_basis(basis, l * stride + i));
#if DIAGONAL
        x[i] += mul(diag[row], value);
#else
        x[i] += value;
#endif
    }
#endif
}
