// Kernels of Cg over n x k vectors (entry i in column i % k). Columns whose stop status is
// nonzero are left untouched. PRECONDITIONER: 0 none (z = r), 1 scalar Jacobi (z = diag r,
// diag n x 1), 2 an operator of its own (z given).
#include "components/preconditioned.cl"
#ifndef FORM_P
#define FORM_P 0  // step_2 forms p (the iteration of check and spmv_p, below)
#endif

// p = 0, prev_rho = 1 (work-items i < size for p, i < k for prev_rho)
__kernel void initialize(const int size, const int k, __global value_type* p,
                         __global value_type* prev_rho)
{
    const int i = get_global_id(0);
    if (i < size) p[i] = 0;
    if (i < k) prev_rho[i] = to_value(1);
}

// partial sums of r . r and r . z (reduction layout)
__kernel void prepare(REDUCTION_PARAMS, __global const value_type* r, __global const value_type* z,
                      __global const value_type* diag, __global value_type* rz,
                      __global value_type* rr, __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    value_type s_rr = 0, s_rz = 0;
    if (col < k) {
        for (int row = begin; row < end; row += lanes) {
            const int i = row * k + col;
            const value_type r_i = r[i];
            s_rr += to_value(abs2(r_i));
            s_rz += mul_conj(r_i, preconditioned_at(i, row, r, z, diag));
        }
    }
    // the work-group's partial sums of r^H r and r^H z (rz only with a preconditioner: else
    // r . z is r . r)
    write_partial_pair(s_rr, s_rz, PRECONDITIONER != 0, c_, y_, lanes, width, col, k, group, rr,
                       rz, tmp);
}

// sums[0, k) = the sums of rr's partial sums and, with a preconditioner, sums[k, 2 k) = rz's: the
// same bits in every work-group (sum_partials)
inline void sum_rr_rz(const int k, __global const value_type* rz, const int rz_parts,
                      __global const value_type* rr, const int rr_parts, __local value_type* sums,
                      __local value_type* tmp)
{
    sum_partials(rr, rr_parts, k, sums, tmp);
#if PRECONDITIONER
    sum_partials(rz, rz_parts, k, sums + k, tmp);
#endif
}
// rho = r . z of column col from those sums (r . r without a preconditioner)
#define RHO_SUM(sums, col) ((sums)[PRECONDITIONER ? k + (col) : (col)])

// The stopping check on ||r|| = sqrt(sum of rr); rho = r . z (sum of rz, written by the first
// work-item of the column); p = z + (rho / prev_rho) p, where rho / prev_rho is 0 if prev_rho is
// 0 (reduction layout, so that a CPU takes long stretches and only a few work-groups sum).
__kernel void step_1(REDUCTION_PARAMS, __global value_type* p, __global const value_type* r,
                     __global const value_type* z, __global const value_type* diag,
                     __global const value_type* rz, const int rz_parts,
                     __global const value_type* rr, const int rr_parts, __global value_type* rho,
                     __global const value_type* prev_rho, STOP_PARAMS, __local value_type* sums,
                     __local value_type* tmp)
{
    sum_rr_rz(k, rz, rz_parts, rr, rr_parts, sums, tmp);
    REDUCTION_LAYOUT;
    if (col >= k) return;
    const bool writer = group == 0 && y_ == 0;
    const value_type rr_c = sums[col], rho_c = RHO_SUM(sums, col);
    if (!stop_check(col, k, sqrt(real_part(rr_c)), writer, STOP_ARGS)) return;
    if (writer) rho[col] = rho_c;
    const value_type beta = !is_zero(prev_rho[col]) ? divide(rho_c, prev_rho[col]) : 0;
    // ROWS_AT_ONCE rows a turn: their loads all in flight before the first store
    for (int row0 = begin; row0 < end; row0 += ROWS_AT_ONCE * lanes) {
        value_type m_[ROWS_AT_ONCE], p_[ROWS_AT_ONCE];
#pragma unroll
        for (int u = 0; u < ROWS_AT_ONCE; ++u) {
            const int row = row0 + u * lanes, i = row * k + col;
            if (row < end) {
                m_[u] = preconditioned_at(i, row, r, z, diag);
                p_[u] = p[i];
            }
        }
#pragma unroll
        for (int u = 0; u < ROWS_AT_ONCE; ++u) {
            const int row = row0 + u * lanes;
            if (row < end) p[row * k + col] = m_[u] + mul(beta, p_[u]);
        }
    }
}

// With FORM_P first p = M r + beta p (beta_p: check's beta; M r of the r read here), stored; then
// alpha = rho / (p . q) (sum of pq); x = x + alpha p; r = r - alpha q; prev_rho = rho in running
// columns, and the partial sums of r . r (and r . z = r . diag r) of every column in the same
// pass (reduction layout). p . q <= 0 or rho == 0 is a breakdown: the column is skipped and the
// column's first work-item writes BREAKDOWN (work-items that read the status before or after
// skip the column either way).
__kernel void step_2(REDUCTION_PARAMS, __global value_type* x, __global value_type* r,
                     __global value_type* p, __global const value_type* q,
                     __global const value_type* z, __global const value_type* diag,
                     __global const value_type* beta_p, __global const value_type* pq,
                     const int pq_parts, __global const value_type* rho,
                     __global value_type* prev_rho, __global uchar* status,
                     __global value_type* rz, __global value_type* rr,
                     __local value_type* sums, __local value_type* tmp)
{
    sum_partials(pq, pq_parts, k, sums, tmp);
    REDUCTION_LAYOUT;
    value_type s_rr = 0, s_rz = 0;
    if (col < k) {
        const value_type beta = sums[col];
        const bool running = status[col] == STATUS_RUNNING;
        const bool ok = real_part(beta) > 0 && !is_zero(rho[col]);
        const bool go = running && ok;
        const value_type alpha = go ? divide(rho[col], beta) : 0;
#if FORM_P
        const value_type beta_c = beta_p[col];
#endif
        // ROWS_AT_ONCE rows a turn: their loads all in flight before the first store
        for (int row0 = begin; row0 < end; row0 += ROWS_AT_ONCE * lanes) {
            value_type r_[ROWS_AT_ONCE], x_[ROWS_AT_ONCE], p_[ROWS_AT_ONCE], q_[ROWS_AT_ONCE];
            value_type d_[ROWS_AT_ONCE], z_[ROWS_AT_ONCE];
#pragma unroll
            for (int u = 0; u < ROWS_AT_ONCE; ++u) {
                const int row = row0 + u * lanes, i = row * k + col;
                if (row < end) {
                    r_[u] = r[i];
                    if (go) {
                        x_[u] = x[i];
                        p_[u] = p[i];
                        q_[u] = q[i];
#if FORM_P && PRECONDITIONER == 2
                        z_[u] = z[i];
#endif
                    }
                    d_[u] = PRECONDITIONER == 1 ? diag[row] : to_value(0);
                }
            }
#pragma unroll
            for (int u = 0; u < ROWS_AT_ONCE; ++u) {
                const int row = row0 + u * lanes, i = row * k + col;
                if (row < end) {
                    value_type r_i = r_[u];
                    if (go) {
#if FORM_P
                        // p = M r + beta p, M r of the r before its update
                        const value_type m_i = PRECONDITIONER == 0   ? r_i
                                               : PRECONDITIONER == 1 ? mul(d_[u], r_i)
                                                                     : z_[u];
                        p_[u] = m_i + mul(beta_c, p_[u]);
                        p[i] = p_[u];
#endif
                        x[i] = x_[u] + mul(alpha, p_[u]);
                        r_i -= mul(alpha, q_[u]);
                        r[i] = r_i;
                    }
                    s_rr += to_value(abs2(r_i));
                    // r . z: z = r (none) or diag r (scalar Jacobi)
                    s_rz += mul_conj(r_i, PRECONDITIONER == 1 ? mul(d_[u], r_i) : r_i);
                }
            }
        }
        if (group == 0 && y_ == 0 && running) {
            if (ok) {
                prev_rho[col] = rho[col];
            } else {
                status[col] = STATUS_BREAKDOWN;
            }
        }
    }
    // the work-group's partial sums of r^H r and r^H z (rz only with a preconditioner: else
    // r . z is r . r)
    write_partial_pair(s_rr, s_rz, PRECONDITIONER != 0, c_, y_, lanes, width, col, k, group, rr,
                       rz, tmp);
}


// ---- The iteration whose SpMV forms p (solver.cg.forms_p: a Csr matrix whose SpMV strategy is
// classical, a GPU's for short rows): spmv_p (q = A p, p = M r + beta p formed where
// each entry is gathered, the partial sums of p . q), step_2 with FORM_P (that p stored, x and
// r updated), check (the stopping check, rho and beta). step_1's pass over p is gone: the
// SpMV gathers M r and p instead of p, and step_2 writes p.

// The stopping check on ||r|| = sqrt(sum of rr); in the columns that run on rho = r . z (sum of
// rz) and beta = rho / prev_rho (0 where prev_rho is 0), beta = 0 in the others (one work-group).
__kernel void check(const int k, __global const value_type* rz, const int rz_parts,
                    __global const value_type* rr, const int rr_parts, __global value_type* rho,
                    __global const value_type* prev_rho, __global value_type* beta, STOP_PARAMS,
                    __local value_type* sums, __local value_type* tmp)
{
    sum_rr_rz(k, rz, rz_parts, rr, rr_parts, sums, tmp);
    for (int col = get_local_id(0); col < k; col += get_local_size(0)) {
        const value_type rr_c = sums[col], rho_c = RHO_SUM(sums, col);
        value_type beta_c = 0;
        if (stop_check(col, k, sqrt(real_part(rr_c)), true, STOP_ARGS)) {
            rho[col] = rho_c;
            beta_c = !is_zero(prev_rho[col]) ? divide(rho_c, prev_rho[col]) : 0;
        }
        beta[col] = beta_c;
    }
}

// The new p at entry i of column c (row `row`): M r + beta p, gathered by row_product
#define P_AT(i, row) (preconditioned_at((i), (row), r, z, diag) + mul(beta_c, p[(i)]))
#define ROW_GATHER(i, col) P_AT(i, col)
#define ROW_GATHER_PARAMS                                                                          \
    const value_type beta_c, __global const value_type* restrict p,                                \
        __global const value_type* restrict r, __global const value_type* restrict z,              \
        __global const value_type* restrict diag
#include "matrix/csr_row_product.cl"  // (row_product, CSR_PARAMS)
#define P_ROW_PRODUCT(row) row_product((row), k, c, row_ptrs, col_idxs, values, beta_c, p, r, z, diag)

#define SPMV_P_PARAMS                                                                         \
    const int n, const int k, CSR_PARAMS, __global const value_type* restrict p,                \
        __global const value_type* restrict r, __global const value_type* restrict z,           \
        __global const value_type* restrict diag, __global const value_type* restrict beta,     \
        __global value_type* restrict q, __global value_type* restrict partial

// Classical layout: one work-item per row, ROWS_AT_ONCE rows a turn, a stride of the whole
// launch; partial sums of p . q per work-group at partial[group * k + c].
__kernel void spmv_p_classical(SPMV_P_PARAMS, __local value_type* tmp)
{
    const int c = get_global_id(1);
    const int stride = get_global_size(0);
    const value_type beta_c = beta[c];
    value_type dot = 0;
    for (int row0 = get_global_id(0); row0 < n; row0 += ROWS_AT_ONCE * stride) {
        value_type sums[ROWS_AT_ONCE];
#pragma unroll
        for (int t = 0; t < ROWS_AT_ONCE; ++t) {
            const int row = row0 + t * stride;
            if (row < n) sums[t] = P_ROW_PRODUCT(row);
        }
#pragma unroll
        for (int t = 0; t < ROWS_AT_ONCE; ++t) {
            const int row = row0 + t * stride, i = row * k + c;
            if (row < n) {
                q[i] = sums[t];
                dot += mul_conj(P_AT(i, row), sums[t]);
            }
        }
    }
    const int lid = get_local_id(0);
    dot = local_sum(tmp, dot, lid, get_local_size(0), 1);
    if (lid == 0) partial[get_group_id(0) * k + c] = dot;
}
