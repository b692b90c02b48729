// Kernels of Gmres. Vectors are n x k row-major (entry (row, c) at row * k + c, `size` = n k);
// basis vector i starts at basis + i * size; h_{i,j} of column c is
// hessenberg[i * hess_stride + j * k + c] (hess_stride = m k); g, cos and sin hold entry i of
// column c at i * k + c. Basis vector j + 1 is stored unnormalized by reorthogonalize and
// normalized by the next orthogonalize, which knows its norm from the partial sums ww.
#include "common.cl"

#define SINGULAR 100  // a rotated diagonal below SINGULAR eps of its column's norm: H is rank-deficient

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
// confirmation of a column PENDING; then in running columns v_0 = v = r / ||r|| and g_0 =
// ||r||; inner = 0 in every column (reduction layout). Work-groups other than the writer may
// read a column's status before the writer's first check stops it and its check count after:
// they then write v and v_0 of that stopped column, which nothing reads (the verdict, g and
// inner are the writer's alone).
__kernel void restart(REDUCTION_PARAMS, __global const value_type* r,
                      __global const value_type* rr, const int rr_parts,
                      __global value_type* basis, __global value_type* v, __global value_type* g,
                      __global int* inner, STOP_PARAMS, __local value_type* sums,
                      __local value_type* tmp)
{
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
    for (int row = begin; row < end; row += lanes) {
        const int i = row * k + col;
        const value_type value = r[i] * inv;
        v[i] = value;
        basis[i] = value;
    }
}

// partial[group] = sum over rows [g * rows_per_group, (g + 1) * rows_per_group) of
// conj(v_i[row, c]) w[row, c], for group = g * (num + 1) k + i k + c, i < num = j + 1, and for
// i = num of |w[row, c]|^2 (||w|| before the orthogonalization, for the test whether it needs a second
// pass), every column. With `rotate` (and j > 0) the first work-item of group c first takes the
// Givens step of Hessenberg column j - 1 of column c, h_{j,j-1} = ||w_j|| from the partial sums ww.
__kernel void multi_dot(const int n, const int k, const int j, const int rotate, const int rows_per_group,
                        const int hess_stride, __global const value_type* basis,
                        __global const value_type* w, __global const value_type* ww,
                        const int ww_parts, __global value_type* partial,
                        __global value_type* hessenberg, __global value_type* g,
                        __global value_type* cos_, __global value_type* sin_, __global int* inner,
                        STOP_PARAMS, __local value_type* sums, __local value_type* tmp)
{
    const int group = get_group_id(0);
    const int num = j + 1;
    sum_partials(ww, rotate && j > 0 ? ww_parts : 0, k, sums, tmp);
    if (rotate && j > 0 && group < k && get_local_id(0) == 0) {
        givens_step(j - 1, group, k, hess_stride, sqrt(real_part(sums[group])), hessenberg, g, cos_,
                    sin_, inner, STOP_ARGS);
    }
    const int pairs = (num + 1) * k;
    const int pair = group % pairs;
    const int c = pair % k;
    const int begin = group / pairs * rows_per_group;
    const int end = min(n, begin + rows_per_group);
    __global const value_type* v = pair / k == num ? w : basis + pair / k * n * k;
    value_type sum = 0;
    for (int row = begin + get_local_id(0); row < end; row += get_local_size(0)) {
        sum += mul_conj(v[row * k + c], w[row * k + c]);
    }
    sum = local_sum(tmp, sum, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) partial[group] = sum;
}

// the second pass's dot products a work-item keeps at once (the same registers for complex
// values: more make PoCL's code generation for a GPU-like work-group take minutes)
#define MAX_DOTS (VALUE_COMPLEX ? 16 : 32)

// The DGKS test of column c after the first pass, from its sums (nrm = ||w_j||, the partial sums
// of V^H w and of w^H w at sums[k + ...]): ||w - V h||^2 = ||w||^2 - ||h||^2 <= ||w||^2 / 2.
inline bool second_pass(__local const value_type* sums, const int k, const int j, const int c)
{
    const real_type nrm = j > 0 ? sqrt(real_part(sums[c])) : 1;
    const real_type inv = nrm > 0 ? 1 / nrm : 0;
    const real_type before = real_part(sums[k + (j + 1) * k + c]) * inv * inv;
    real_type h_sq = 0;
    for (int l = 0; l <= j; ++l) {
        const value_type h_l = sums[k + l * k + c] * inv * (l == j ? inv : 1);
        h_sq += abs2(h_l);
    }
    return !(before - h_sq > before / 2);
}

// The first pass (reduction layout): nrm = ||w_j|| (sum of ww; 1 for j = 0); v_j = v_j / nrm
// (stored unnormalized); h = (V^H w) / nrm (and / nrm^2 for v_j) from the partial sums h;
// w = w / nrm - V h; H[0:j+1, j] = h in running columns. A column whose w lost most of its
// norm, ||w - V h||^2 = ||w||^2 - ||h||^2 <= ||w||^2 / 2 (the DGKS test: then rounding may have
// left it far from orthogonal), needs a second pass: its flag reorth is set, and in the same
// pass go out the partial sums h2 of V^H w, the second pass's dot products (MAX_DOTS at a time;
// with SINGLE_LANE, a CPU's one work-item per group, without a work-group sum).
__kernel void orthogonalize(REDUCTION_PARAMS, const int j, const int hess_stride,
                            __global value_type* basis, __global value_type* w,
                            __global const value_type* ww, const int ww_parts,
                            __global const value_type* h, const int h_parts,
                            __global value_type* hessenberg, __global value_type* h2,
                            __global uchar* reorth, __global const uchar* status,
                            __local value_type* sums, __local value_type* tmp)
{
    const int num = j + 1;
    sum_partials(ww, j > 0 ? ww_parts : 0, k, sums, tmp);
    sum_partials(h, h_parts, (num + 1) * k, sums + k, tmp);
    REDUCTION_LAYOUT;
    const int size = n * k;
    const int c = col < k ? col : 0;
    const real_type nrm = j > 0 ? sqrt(real_part(sums[c])) : 1;
    const real_type inv = nrm > 0 ? 1 / nrm : 0;
    const bool again = second_pass(sums, k, j, c);
    if (col < k && group == 0 && y_ == 0) reorth[col] = again;
    // the dot products of the second pass only where it runs: the work-group makes them when
    // one of its columns needs them (a bound the same for all its work-items: barriers)
    bool group_again = false;
    for (int cc = get_group_id(0) * width; cc < min(k, (int)get_group_id(0) * width + width); ++cc) {
        group_again |= second_pass(sums, k, j, cc);
    }
    if (col < k && !again) {
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            const value_type v_j = basis[j * size + i] * inv;
            if (j > 0) basis[j * size + i] = v_j;
            value_type w_i = w[i] * inv;
            for (int l = 0; l < j; ++l) w_i -= mul(sums[k + l * k + col] * inv, basis[l * size + i]);
            w[i] = w_i - mul(sums[k + j * k + col] * inv * inv, v_j);
        }
    }
    for (int first = 0; first < (group_again ? num : 0); first += MAX_DOTS) {
        const int count = min(MAX_DOTS, num - first);
        value_type acc[MAX_DOTS];
        for (int l = 0; l < MAX_DOTS; ++l) acc[l] = 0;
        if (col < k && again) {
            for (int row = begin; row < end; row += lanes) {
                const int i = row * k + col;
                value_type w_i;
                if (first == 0) {
                    const value_type v_j = basis[j * size + i] * inv;
                    if (j > 0) basis[j * size + i] = v_j;
                    w_i = w[i] * inv;
                    for (int l = 0; l < j; ++l) w_i -= mul(sums[k + l * k + col] * inv, basis[l * size + i]);
                    w_i -= mul(sums[k + j * k + col] * inv * inv, v_j);
                    w[i] = w_i;
                } else {
                    w_i = w[i];
                }
                for (int l = 0; l < count; ++l) acc[l] += mul_conj(basis[(first + l) * size + i], w_i);
            }
        }
#if SINGLE_LANE
        if (col < k && again) {
            for (int l = 0; l < count; ++l) h2[group * num * k + (first + l) * k + col] = acc[l];
        }
#else
        for (int l = 0; l < count; ++l) {
            const value_type s_l = REDUCE_LANES(acc[l], tmp);
            if (IS_LANE_ROOT && again) h2[group * num * k + (first + l) * k + col] = s_l;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
#endif
    }
    if (col < k && group == 0 && y_ == 0 && status[col] == STATUS_RUNNING) {
        for (int l = 0; l < j; ++l) hessenberg[l * hess_stride + j * k + col] = sums[k + l * k + col] * inv;
        hessenberg[j * hess_stride + j * k + col] = sums[k + j * k + col] * inv * inv;
    }
}

// The second pass (reduction layout), in columns whose reorth flag is set: w = w - V h2 (h2 from
// the partial sums), H[0:j+1, j] += h2 in running columns; then in every column v_{j+1} = v = w
// and the partial sums of ||w||^2.
__kernel void reorthogonalize(REDUCTION_PARAMS, const int j, const int hess_stride,
                              __global value_type* basis, __global value_type* w,
                              __global const value_type* h, const int h_parts,
                              __global value_type* hessenberg, __global value_type* v,
                              __global const uchar* reorth, __global const uchar* status,
                              __global value_type* ww, __local value_type* sums,
                              __local value_type* tmp)
{
    const int num = j + 1;
    sum_partials(h, h_parts, num * k, sums, tmp);
    REDUCTION_LAYOUT;
    const int size = n * k;
    value_type s = 0;
    if (col < k) {
        const int used = reorth[col] ? num : 0;
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type value = w[i];
            for (int l = 0; l < used; ++l) value -= mul(sums[l * k + col], basis[l * size + i]);
            w[i] = value;
            basis[num * size + i] = value;
            v[i] = value;
            s += to_value(abs2(value));
        }
        if (used && group == 0 && y_ == 0 && status[col] == STATUS_RUNNING) {
            for (int l = 0; l < num; ++l) hessenberg[l * hess_stride + j * k + col] += sums[l * k + col];
        }
    }
    s = REDUCE_LANES(s, tmp);
    if (IS_LANE_ROOT) ww[group * k + col] = s;
}

// One work-group: the Givens step of Hessenberg column j in every running column,
// h_{j+1,j} = ||w|| from the partial sums ww.
__kernel void givens(const int k, const int j, const int hess_stride,
                     __global const value_type* ww, const int ww_parts,
                     __global value_type* hessenberg, __global value_type* g,
                     __global value_type* cos_, __global value_type* sin_, __global int* inner,
                     STOP_PARAMS, __local value_type* sums, __local value_type* tmp)
{
    sum_partials(ww, ww_parts, k, sums, tmp);
    for (int c = get_local_id(0); c < k; c += get_local_size(0)) {
        givens_step(j, c, k, hess_stride, sqrt(real_part(sums[c])), hessenberg, g, cos_, sin_, inner,
                    STOP_ARGS);
    }
}

// y = R^-1 g per column (R the leading inner x inner triangle of H; each work-group solves it
// in local memory, one work-item per column), then x += V y, or x += diag (V y) with DIAGONAL
// (reduction layout).
__kernel void update(REDUCTION_PARAMS, const int m, const int hess_stride,
                     __global const value_type* basis, __global const value_type* hessenberg,
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
    const int size = n * k;
    const int used = inner[col];
    for (int row = begin; row < end; row += lanes) {
        const int i = row * k + col;
        value_type value = 0;
        for (int l = 0; l < used; ++l) value += mul(y[l * k + col], basis[l * size + i]);
#if DIAGONAL
        x[i] += mul(diag[row], value);
#else
        x[i] += value;
#endif
    }
}
