// Kernels of Minres over n x k vectors (entry i in column i % k). Columns whose stop status is
// nonzero are left untouched. PRECONDITIONER: 0 none (M v = v, z is q), 1 scalar Jacobi (M v =
// diag v, diag n x 1), 2 an operator of its own (M v = z_tilde given). With a preconditioner the
// residual r is kept by its recurrence and the check is on its norm; without, on |eta|.
// The state (STATE_ROWS x k, row-major) holds per column the scalars of the Lanczos process and
// of its Givens rotations; step_2 reads state_old and writes state, step_1 copies state to
// state_old: no launch reads a value that it writes.
#include "components/preconditioned.cl"

#define GAMMA 0     // beta_k: T(k, k - 1)
#define DELTA 1     // T(k - 2, k) after the rotations
#define COS 2       // the last rotation
#define SIN 3
#define COS_PREV 4  // the one before
#define SIN_PREV 5
#define ETA 6       // the rotated right-hand side: |eta| is the residual's M^-1-norm
#define STATE_ROWS 7
// v . M v below 0 by at most this many epsilons of |alpha|^2 + |beta|^2 is rounding: taken as 0
#define ROUNDING 100

// In the running columns of `mask` (every column where `masked` is 0): beta = sqrt(r . M r) (sum
// of rz; < 0 or not finite: breakdown, written by the column's first work-item); q = r / beta,
// z = M r / beta (0 where beta is 0); q_prev = p = p_prev = 0; the state reset: cos = 1, eta =
// beta, the rest 0 (reduction layout: the same work-items as the kernels around it).
__kernel void initialize(REDUCTION_PARAMS, __global const value_type* r, __global const value_type* zr,
                         __global const value_type* diag, __global value_type* q, __global value_type* z,
                         __global value_type* q_prev, __global value_type* p, __global value_type* p_prev,
                         __global const value_type* rz, const int rz_parts, __global value_type* state,
                         __global uchar* status, __global const uchar* mask, const int masked,
                         __local value_type* sums, __local value_type* tmp)
{
    sum_partials(rz, rz_parts, k, sums, tmp);
    REDUCTION_LAYOUT;
    if (col >= k || (masked && !mask[col]) || status[col] != STATUS_RUNNING) return;
    const real_type beta2 = real_part(sums[col]);
    const bool ok = isfinite(beta2) && beta2 >= 0;
    if (group == 0 && y_ == 0) {
        if (ok) {
            for (int s = 0; s < STATE_ROWS; ++s) state[s * k + col] = 0;
            state[COS * k + col] = to_value(1);
            state[ETA * k + col] = to_value(sqrt(beta2));
        } else {
            status[col] = STATUS_BREAKDOWN;
        }
    }
    if (!ok) return;
    const real_type inv = beta2 > 0 ? 1 / sqrt(beta2) : 0;
    for (int row = begin; row < end; row += lanes) {
        const int i = row * k + col;
        q[i] = r[i] * inv;
#if PRECONDITIONER
        z[i] = preconditioned_at(i, row, r, zr, diag) * inv;
#endif
        q_prev[i] = 0;
        p[i] = 0;
        p_prev[i] = 0;
    }
}

// state_old = state; where `check`: the stopping check on ||r|| = sqrt(sum of rr) (with a
// preconditioner) or |eta|; in the columns that run on: alpha = z . A z (sum of za), v = v -
// alpha q - beta q_prev, and (PRECONDITIONER < 2) the partial sums of v . M v of every column
// (updated or not).
__kernel void step_1(REDUCTION_PARAMS, __global value_type* v, __global const value_type* q,
                     __global const value_type* q_prev, __global const value_type* diag,
                     __global const value_type* za, const int za_parts, __global const value_type* rr,
                     const int rr_parts, __global value_type* vz, __global const value_type* state,
                     __global value_type* state_old, const int check, STOP_PARAMS,
                     __local value_type* sums, __local value_type* tmp)
{
    sum_partials(za, za_parts, k, sums, tmp);
#if PRECONDITIONER
    sum_partials(rr, rr_parts, k, sums + k, tmp);
#endif
    REDUCTION_LAYOUT;
    value_type s_vz = 0;
    if (col < k) {
        const bool writer = group == 0 && y_ == 0;
        if (writer) {
            for (int s = 0; s < STATE_ROWS; ++s) state_old[s * k + col] = state[s * k + col];
        }
        bool running = status[col] == STATUS_RUNNING;
        if (check) {
#if PRECONDITIONER
            const real_type norm = sqrt(real_part(sums[k + col]));
#else
            const real_type norm = abs_value(state[ETA * k + col]);
#endif
            running = stop_check(col, k, norm, writer, STOP_ARGS);
        }
        const value_type alpha = sums[col];
        const value_type beta = state[GAMMA * k + col];
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            value_type v_i = v[i];
            if (running) {
                v_i -= mul(alpha, q[i]) + mul(beta, q_prev[i]);
                v[i] = v_i;
            }
#if PRECONDITIONER == 0
            s_vz += to_value(abs2(v_i));
#elif PRECONDITIONER == 1
            s_vz += mul_conj(v_i, mul(diag[row], v_i));
#endif
        }
    }
#if PRECONDITIONER < 2
    const value_type t = REDUCE_LANES(s_vz, tmp);
    if (IS_LANE_ROOT) vz[group * k + col] = t;
#endif
}

// beta = sqrt(v . M v) (sum of vz; below 0 by a rounding: 0, else or not finite: breakdown);
// T's new column (gamma = beta_k, alpha = z . A z, the sum of za) rotated by the last two
// rotations and a new rotation (c, s) that zeroes beta (h = 0: breakdown); in running columns:
// p_prev, p = p, (z - gamma p - delta p_prev) / h;  x += c eta p;  q_prev, q = q, v / beta;
// z = M v / beta;  r = |s|^2 r + eta_next c q (with a preconditioner, and the partial sums of
// r . r of every column, updated or not); the state written by the column's first work-item (reduction layout).
__kernel void step_2(REDUCTION_PARAMS, __global value_type* x, __global value_type* r,
                     __global value_type* p, __global value_type* p_prev, __global value_type* q,
                     __global value_type* q_prev, __global value_type* z, __global const value_type* v,
                     __global const value_type* z_tilde, __global const value_type* diag,
                     __global const value_type* za, const int za_parts, __global const value_type* vz,
                     const int vz_parts, __global const value_type* state_old, __global value_type* state,
                     __global uchar* status, __global value_type* rr, __local value_type* sums,
                     __local value_type* tmp)
{
    sum_partials(za, za_parts, k, sums, tmp);
    sum_partials(vz, vz_parts, k, sums + k, tmp);
    REDUCTION_LAYOUT;
    value_type s_rr = 0;
    if (col < k) {
        const value_type alpha = sums[col];
        const real_type beta2 = real_part(sums[k + col]);
        const value_type gamma = state_old[GAMMA * k + col], cos = state_old[COS * k + col];
        const value_type sin = state_old[SIN * k + col], cos_prev = state_old[COS_PREV * k + col];
        const value_type sin_prev = state_old[SIN_PREV * k + col], eta = state_old[ETA * k + col];
        const real_type floor = ROUNDING * EPSILON * (abs2(alpha) + abs2(gamma));
        bool ok = isfinite(beta2) && beta2 >= -floor;
        const real_type beta = beta2 > 0 ? sqrt(beta2) : 0;
        // T's new column rotated by the last two rotations
        const value_type delta = mul(sin_prev, gamma);
        // (G = [[c, s], [-conj(s), conj(c)]]: Ginkgo's kernels leave out the conjugates of c, which
        // lets the rounding in a complex c grow until the recurrence parts from the residual)
        const value_type gamma_r = mul(mul_conj(cos_prev, cos), gamma) + mul(sin, alpha);
        const value_type alpha_r = mul_conj(cos, alpha) - mul(mul_conj(sin, conj_value(cos_prev)), gamma);
        // the new rotation: c alpha_r + s beta = h, -conj(s) alpha_r + conj(c) beta = 0
        const real_type h = hypot(abs_value(alpha_r), beta);
        ok = ok && isfinite(h) && h != 0;
        const real_type safe_h = ok ? h : 1;
        const value_type c_new = conj_value(alpha_r) / safe_h;
        const value_type s_new = to_value(beta / safe_h);
        const value_type eta_next = -mul(conj_value(s_new), eta);
        const bool running = status[col] == STATUS_RUNNING;
        if (group == 0 && y_ == 0 && running) {
            if (ok) {
                state[GAMMA * k + col] = to_value(beta);
                state[DELTA * k + col] = delta;
                state[COS * k + col] = c_new;
                state[SIN * k + col] = s_new;
                state[COS_PREV * k + col] = cos;
                state[SIN_PREV * k + col] = sin;
                state[ETA * k + col] = eta_next;
            } else {
                status[col] = STATUS_BREAKDOWN;
            }
        }
        if (!(running && ok)) {
#if PRECONDITIONER
            for (int row = begin; row < end; row += lanes) s_rr += to_value(abs2(r[row * k + col]));
#endif
        } else {
            const value_type step = mul(c_new, eta);
            const real_type inv_beta = beta > 0 ? 1 / beta : 0;
#if PRECONDITIONER
            const real_type s2 = abs2(s_new);
            const value_type r_coef = mul(eta_next, c_new);
#endif
            for (int row = begin; row < end; row += lanes) {
                const int i = row * k + col;
#if PRECONDITIONER
                const value_type z_i = z[i];
#else
                const value_type z_i = q[i];
#endif
                const value_type p_i = (z_i - mul(gamma_r, p[i]) - mul(delta, p_prev[i])) / safe_h;
                p_prev[i] = p[i];
                p[i] = p_i;
                x[i] += mul(step, p_i);
                const value_type q_new = v[i] * inv_beta;
                q_prev[i] = q[i];
                q[i] = q_new;
#if PRECONDITIONER
                z[i] = preconditioned_at(i, row, v, z_tilde, diag) * inv_beta;
                const value_type r_i = s2 * r[i] + mul(r_coef, q_new);
                r[i] = r_i;
                s_rr += to_value(abs2(r_i));
#endif
            }
        }
    }
#if PRECONDITIONER
    const value_type t = REDUCE_LANES(s_rr, tmp);
    if (IS_LANE_ROOT) rr[group * k + col] = t;
#endif
}
