// Kernels of Gcr, the generalized conjugate residual method restarted after m directions.
// Vectors are n x k row-major (entry (row, c) at row * k + c); the directions p_i and their
// products q_i = A p_i, i < m, are the bases P and Q (vector i at pbasis / qbasis + i * n k, in
// the value type: STORAGE 0 of components/krylov_basis.cl); nq[i k + c] = ||q_i||^2 of column c.
// Iteration kk of a cycle, after z = M r and t = A z: multi_dot (the dot products of t with
// q_0..q_{kk-1}), orthogonalize (the new direction p_kk and its product q_kk), step_1 (x and r).
// They read kk from the device: 0 where `first` (the cycle's first iteration), else step[parity]
// (iteration kk having parity kk % 2; step_1 sets step[1 - parity] = kk + 1), so that the launches
// of the later iterations depend on kk % 2 alone and a captured iteration replays for every kk.
#define ITERATION(step, parity, first) ((first) ? 0 : (step)[parity])
#include "common.cl"
#include "components/krylov_basis.cl"

// The partial sums of conj(q_i) . t, i < kk (rows of m k per work-group).
__kernel void multi_dot(REDUCTION_PARAMS, __global const int* step, const int parity, const int first,
                        const int m, __global const value_type* qbasis, __global const value_type* t,
                        __global value_type* partial, __local value_type* red)
{
    const int kk = ITERATION(step, parity, first);
    REDUCTION_LAYOUT;
#if CPU_LAYOUT
    cpu_basis_dots(kk, false, k, col, begin, end, group, qbasis, n * k, t, partial, m * k);
#else
    for (int first = 0; first < kk; first += DOTS) {
        basis_dots(first, kk, false, LAYOUT_ARGS, qbasis, n * k, t, partial, m * k, red);
    }
#endif
}

// The new direction of iteration kk: with beta_i = (conj(q_i) . t) / ||q_i||^2 (the sums of
// multi_dot's partial sums h; 0 where ||q_i|| = 0), q_kk = t - sum beta_i q_i and p_kk = z - sum
// beta_i p_i (A p_kk = q_kk), and the partial sums of ||q_kk||^2, conj(q_kk) . r and ||r||^2 into
// qr (3 k per work-group).
__kernel void orthogonalize(REDUCTION_PARAMS, __global const int* step, const int parity,
                            const int first, const int m, __global value_type* pbasis,
                            __global value_type* qbasis, __global const value_type* z,
                            __global const value_type* t, __global const value_type* r,
                            __global const value_type* nq, __global const value_type* h,
                            const int h_parts, __global value_type* qr, __local value_type* sums,
                            __local value_type* tmp)
{
    const int kk = ITERATION(step, parity, first);
    sum_partials_strided(h, h_parts, m * k, kk * k, sums, tmp);
    for (int e = get_local_id(0); e < kk * k; e += get_local_size(0)) {
        const real_type norm2 = real_part(nq[e]);
        sums[e] *= norm2 > 0 ? 1 / norm2 : 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    REDUCTION_LAYOUT;
    const int stride = n * k;
    value_type s_qq = 0, s_qr = 0, s_rr = 0;
    if (col < k) {
#if CPU_LAYOUT
        s_qq = to_value(cpu_basis_update(kk, sums, 1, k, col, begin, end, qbasis, stride, t, qbasis + kk * stride));
        cpu_basis_update(kk, sums, 1, k, col, begin, end, pbasis, stride, z, pbasis + kk * stride);
        s_qr = stretch_dot(qbasis, kk * stride, r, begin, end, k, col);
        s_rr = stretch_norm2(r, begin, end, k, col);
#else
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type q_i = t[i], p_i = z[i];
            for (int l = 0; l < kk; ++l) {
                const value_type beta = sums[l * k + col];
                q_i -= mul(beta, qbasis[l * stride + i]);
                p_i -= mul(beta, pbasis[l * stride + i]);
            }
            qbasis[kk * stride + i] = q_i;
            pbasis[kk * stride + i] = p_i;
            s_qq += to_value(abs2(q_i));
            s_qr += mul_conj(q_i, r[i]);
            s_rr += to_value(abs2(r[i]));
        }
#endif
    }
    s_qq = REDUCE_LANES(s_qq, tmp);
    barrier(CLK_LOCAL_MEM_FENCE);
    s_qr = REDUCE_LANES(s_qr, tmp);
    barrier(CLK_LOCAL_MEM_FENCE);
    s_rr = REDUCE_LANES(s_rr, tmp);
    if (IS_LANE_ROOT) {
        qr[group * 3 * k + col] = s_qq;
        qr[group * 3 * k + k + col] = s_qr;
        qr[group * 3 * k + 2 * k + col] = s_rr;
    }
}

// The step of iteration kk (Ginkgo's step_1) in running columns: alpha = (conj(q_kk) . r) / ||q_kk||^2 (the sums of
// qr), x += alpha p_kk, r -= alpha q_kk (the residual's least-squares step along q_kk); nq[kk] =
// ||q_kk||^2; the partial sums of ||r||^2 into rr, every column. A column whose q_kk is 0 though r
// is not (A z in the span of the earlier q: no new direction, A or M singular) stops with a
// breakdown; one whose r is 0 already idles. step[1 - parity] = kk + 1.
__kernel void step_1(REDUCTION_PARAMS, __global int* step, const int parity, const int first,
                     __global const value_type* pbasis, __global const value_type* qbasis,
                     __global value_type* x, __global value_type* r, __global const value_type* qr,
                     const int qr_parts, __global value_type* nq, __global value_type* rr,
                     __global uchar* status, __local value_type* sums, __local value_type* tmp)
{
    const int kk = ITERATION(step, parity, first);
    if (get_group_id(0) == 0 && get_group_id(1) == 0 && get_local_id(0) == 0) step[1 - parity] = kk + 1;
    sum_partials(qr, qr_parts, 3 * k, sums, tmp);
    REDUCTION_LAYOUT;
    const int stride = n * k;
    value_type s = 0;
    if (col < k) {
        const real_type norm2 = real_part(sums[col]);
        const bool usable = norm2 > 0 && isfinite(norm2);
        const bool run = status[col] == STATUS_RUNNING && usable;
        if (group == 0 && y_ == 0) {
            nq[kk * k + col] = to_value(norm2);
            if (status[col] == STATUS_RUNNING && !usable && real_part(sums[2 * k + col]) != 0) {
                status[col] = STATUS_BREAKDOWN;
            }
        }
        const value_type alpha = sums[k + col] * (run ? 1 / norm2 : 0);
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type r_i = r[i];
            if (run) {
                x[i] += mul(alpha, pbasis[kk * stride + i]);
                r_i -= mul(alpha, qbasis[kk * stride + i]);
                r[i] = r_i;
            }
            s += to_value(abs2(r_i));
        }
    }
    s = REDUCE_LANES(s, tmp);
    if (IS_LANE_ROOT) rr[group * k + col] = s;
}
