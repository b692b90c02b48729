// What the batched solvers' kernels share (batch/solver/*_kernels.cl include it): one
// work-group solves one batch item at a time, looping over items when there are more items than
// work-groups. Build options (chosen by components/batch_solver.py):
//   WG        work-items per work-group, a power of two; 1: one work-item solves an item alone,
//             without barriers (CPU devices)
//   FORMAT    FORMAT_CSR, FORMAT_ELL or FORMAT_DENSE: the format of the system matrix
//   PRECOND   PRECOND_NONE, PRECOND_SCALAR or PRECOND_BLOCK (Jacobi), PRECOND_ILU or PRECOND_ISAI
//   LOCAL_<a> 1 where array a lives in local memory, 0 where in global memory: the matrix
//             values, the preconditioner, x and each work vector
#include "common.cl"

#define FORMAT_CSR 1
#define FORMAT_ELL 2
#define FORMAT_DENSE 3
#define PRECOND_NONE 0
#define PRECOND_SCALAR 1
#define PRECOND_BLOCK 2
#define PRECOND_ILU 3
#define PRECOND_ISAI 4
// ILU and ISAI apply M to a whole vector at once (PREC_PREPARE, into the work vector pz)
#define PREC_WHOLE (PRECOND == PRECOND_ILU || PRECOND == PRECOND_ISAI)
// the preconditioners that read other rows of v than their own: v must be complete (SYNC()) first
#define PREC_SYNC (PRECOND == PRECOND_BLOCK || PREC_WHOLE)

#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)

// Four values summed over the work-group at once (GROUP_SUM): a float4 / double4, or for
// complex values a float8 / double8 of their parts; SUM4 packs them, SUM_AT(sums, j) (j a
// literal 0..3) unpacks value j.
#if VALUE_COMPLEX
typedef XCAT(RealType, 8) sums_type;
inline sums_type pack_sums(const value_type a, const value_type b, const value_type c, const value_type d)
{
    return (sums_type)(a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y);
}
#define SUM_AT_0(s) ((value_type)((s).s0, (s).s1))
#define SUM_AT_1(s) ((value_type)((s).s2, (s).s3))
#define SUM_AT_2(s) ((value_type)((s).s4, (s).s5))
#define SUM_AT_3(s) ((value_type)((s).s6, (s).s7))
#else
typedef XCAT(ValueType, 4) sums_type;
#define pack_sums(a, b, c, d) ((sums_type)((value_type)(a), (value_type)(b), (value_type)(c), (value_type)(d)))
#define SUM_AT_0(s) ((s).s0)
#define SUM_AT_1(s) ((s).s1)
#define SUM_AT_2(s) ((s).s2)
#define SUM_AT_3(s) ((s).s3)
#endif
#define SUM_AT(s, j) XCAT(SUM_AT_, j)(s)

// The arguments every batched solver kernel takes first: sizes, the shared pattern, the values
// of the matrix (mat_stride per item) and of the preconditioner (prec_stride per item; Jacobi's
// blocks with block_ptrs, row_blocks and block_stride; ILU's and ISAI's arrays in these three as
// components/batch_solver.py's _factor_arrays lays them out), b, x,
// the stopping settings, the per-item results, and the work space: gslot entries of global
// memory per work-group, lwork in local memory, WG slots for the reductions.
#define BATCH_SOLVER_ARGS                                                                         \
    const int num_items, const int n, __global const int* row_ptrs,                               \
    __global const int* col_idxs, const int ell_width, __global const value_type* mat_values,     \
    const int mat_stride, __global const int* block_ptrs, __global const int* row_blocks,         \
    const int block_stride, __global const value_type* prec_values, const int prec_stride,        \
    __global const value_type* b, __global value_type* x, const int max_iters,                    \
    const real_type rtol, const real_type atol, __global int* iterations,                       \
    __global real_type* res_norms, __global uchar* reasons, __global value_type* gwork,           \
    const int gslot, __local value_type* lwork, __local sums_type* slots

// -- work space -------------------------------------------------------------------------------
// WORK(v, size) declares the work array v of size entries where LOCAL_v says: in lwork or in this
// work-group's slot of gwork, at the next free offset of either.
#define SPACE_0 __global
#define SPACE_1 __local
#define BASE_0 gbase
#define BASE_1 lwork
#define OFFSET_0 goffset
#define OFFSET_1 loffset
#define WORK(v, size)                                                                             \
    XCAT(SPACE_, XCAT(LOCAL_, v)) value_type* v = XCAT(BASE_, XCAT(LOCAL_, v))                      \
                                                   + XCAT(OFFSET_, XCAT(LOCAL_, v));              \
    XCAT(OFFSET_, XCAT(LOCAL_, v)) += (size)

// The start of every item's loop: a_vals (the matrix values), m_vals (the preconditioner) and
// xv (x) point at the item's data in global memory or at local copies of it.
#define BEGIN_ITEM                                                                                \
    int loffset = 0, goffset = 0;                                                                 \
    __global value_type* gbase = gwork + (size_t)get_group_id(0) * gslot;                         \
    __global const value_type* bv = b + (size_t)item * n;                                        \
    DECLARE_MATRIX DECLARE_PREC DECLARE_PREC_WORK DECLARE_X

// name: the item's `stride` values of src, copied into local memory, or read where they are.
#define ITEM_VALUES_LOCAL(name, src, stride)                                                      \
    __local value_type* name = lwork + loffset;                                                   \
    loffset += stride;                                                                            \
    for (int e = lid; e < stride; e += WG) name[e] = src[(size_t)item * stride + e];
#define ITEM_VALUES_GLOBAL(name, src, stride) __global const value_type* name = src + (size_t)item * stride;

#if LOCAL_a_vals
#define DECLARE_MATRIX ITEM_VALUES_LOCAL(a_vals, mat_values, mat_stride)
#else
#define DECLARE_MATRIX ITEM_VALUES_GLOBAL(a_vals, mat_values, mat_stride)
#endif

#if PRECOND == PRECOND_NONE
#define DECLARE_PREC
#elif LOCAL_m_vals
#define DECLARE_PREC ITEM_VALUES_LOCAL(m_vals, prec_values, prec_stride)
#else
#define DECLARE_PREC ITEM_VALUES_GLOBAL(m_vals, prec_values, prec_stride)
#endif

#if PRECOND == PRECOND_ILU
#define DECLARE_PREC_WORK WORK(pz, n);
#elif PRECOND == PRECOND_ISAI
#define DECLARE_PREC_WORK WORK(pz, n); WORK(ptmp, n);
#else
#define DECLARE_PREC_WORK
#endif

#if LOCAL_xv
#define DECLARE_X                                                                                 \
    __local value_type* xv = lwork + loffset;                                                     \
    loffset += n;                                                                                 \
    for (int e = lid; e < n; e += WG) xv[e] = x[(size_t)item * n + e];
#define STORE_X for (int e = lid; e < n; e += WG) x[(size_t)item * n + e] = xv[e];
#else
#define DECLARE_X __global value_type* xv = x + (size_t)item * n;
#define STORE_X
#endif

// -- work-group primitives ----------------------------------------------------------------------
#if WG == 1
#define SYNC()
#define FOR_ROWS(i) for (int i = 0; i < n; ++i)
#define GROUP_SUM(v) (v)
#define LEADER 1
#else
#define SYNC() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define FOR_ROWS(i) for (int i = lid; i < n; i += WG)
#define GROUP_SUM(v) group_sum(slots, (v), lid)
#define LEADER (lid == 0)

// The sum over the work-group of each work-item's v, returned to every work-item (a tree in
// local memory; four sums at once cost the barriers of one).
inline sums_type group_sum(__local sums_type* slots, const sums_type v, const int lid)
{
    slots[lid] = v;
    // the global fence too: the pass before wrote vectors that may live in global memory
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s /= 2) {
        if (lid < s) slots[lid] += slots[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const sums_type sum = slots[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}
#endif

#define SUM4(a, b, c, d) GROUP_SUM(pack_sums(a, b, c, d))

// -- the matrix and the preconditioner, one row at a time -----------------------------------------
// out = (A v)_i
#if FORMAT == FORMAT_CSR
#define SPMV_ROW(out, v, i)                                                                       \
    {                                                                                             \
        value_type acc_ = 0;                                                                      \
        for (int k_ = row_ptrs[i]; k_ < row_ptrs[(i) + 1]; ++k_) acc_ += mul(a_vals[k_], v[col_idxs[k_]]); \
        out = acc_;                                                                               \
    }
#elif FORMAT == FORMAT_ELL
#define SPMV_ROW(out, v, i)                                                                       \
    {                                                                                             \
        value_type acc_ = 0;                                                                      \
        for (int k_ = 0; k_ < ell_width; ++k_) {                                                  \
            const int c_ = col_idxs[(i) + k_ * n];                                                \
            if (c_ >= 0) acc_ += mul(a_vals[(i) + k_ * n], v[c_]);                                \
        }                                                                                         \
        out = acc_;                                                                               \
    }
#else
#define SPMV_ROW(out, v, i)                                                                       \
    {                                                                                             \
        value_type acc_ = 0;                                                                      \
        for (int k_ = 0; k_ < n; ++k_) acc_ += mul(a_vals[(i) * n + k_], v[k_]);                  \
        out = acc_;                                                                               \
    }
#endif

// out = (M v)_i. Block Jacobi reads the rows of i's block: v must be complete (SYNC() first);
// ILU and ISAI read pz, which PREC_PREPARE(v) computed before (with all work-items).
#if PRECOND == PRECOND_NONE
#define PREC_ROW(out, v, i) out = v[i];
#elif PRECOND == PRECOND_SCALAR
#define PREC_ROW(out, v, i) out = mul(m_vals[i], v[i]);
#elif PREC_WHOLE
#define PREC_ROW(out, v, i) out = pz[i];
#else
#define PREC_ROW(out, v, i)                                                                       \
    {                                                                                             \
        const int blk_ = row_blocks[i];                                                           \
        const int start_ = block_ptrs[blk_];                                                      \
        const int offset_ = blk_ * block_stride * block_stride + (i) - start_;                   \
        value_type acc_ = 0;                                                                      \
        for (int j_ = 0; j_ < block_ptrs[blk_ + 1] - start_; ++j_)                                \
            acc_ += mul(m_vals[offset_ + j_ * block_stride], v[start_ + j_]);                     \
        out = acc_;                                                                               \
    }
#endif

// PREC_PREPARE(v): pz = M v for ILU and ISAI, by all work-items, v complete before and pz
// complete after; nothing for Jacobi.
#if PRECOND == PRECOND_ILU
// pz = U^-1 (L^-1 v): m_vals holds L's strictly lower entries (unit diagonal) and U's in the
// pattern (ILU_PTRS: row pointers, ILU_DIAG: diagonal positions; row_blocks: column indices).
// A row's substitution: pz_i = (v_i - sum_{j<i} l_ij pz_j), then pz_i = (pz_i - sum_{j>i} u_ij pz_j) / u_ii.
#define ILU_PTRS (block_ptrs + 2)
#define ILU_DIAG (block_ptrs + 3 + n)
#define ILU_FORWARD_ROW(v, i)                                                                     \
    {                                                                                             \
        value_type acc_ = v[i];                                                                   \
        for (int p_ = ILU_PTRS[i]; p_ < ILU_DIAG[i]; ++p_) acc_ -= mul(m_vals[p_], pz[row_blocks[p_]]); \
        pz[i] = acc_;                                                                             \
    }
#define ILU_BACKWARD_ROW(i)                                                                       \
    {                                                                                             \
        value_type acc_ = pz[i];                                                                  \
        for (int p_ = ILU_DIAG[i] + 1; p_ < ILU_PTRS[(i) + 1]; ++p_) acc_ -= mul(m_vals[p_], pz[row_blocks[p_]]); \
        pz[i] = divide(acc_, m_vals[ILU_DIAG[i]]);                                                \
    }
#if WG == 1
// one work-item: the rows in order, then in reverse order
#define PREC_PREPARE(v)                                                                           \
    {                                                                                             \
        for (int i_ = 0; i_ < n; ++i_) ILU_FORWARD_ROW(v, i_)                                     \
        for (int i_ = n - 1; i_ >= 0; --i_) ILU_BACKWARD_ROW(i_)                                  \
    }
#else
// level by level, the rows of a level in parallel: block_ptrs[0] levels of L, then of U, their
// pointers (block_ptrs[0] + 1) from ILU_LEVELS and their rows (L's, then U's) from ILU_ROWS
#define ILU_LEVELS (ILU_DIAG + n)
#define ILU_ROWS (ILU_LEVELS + block_ptrs[0] + 1)
#define PREC_PREPARE(v)                                                                           \
    {                                                                                             \
        const int levels_ = block_ptrs[0], l_levels_ = block_ptrs[1];                             \
        for (int l_ = 0; l_ < levels_; ++l_) {                                                    \
            for (int k_ = ILU_LEVELS[l_] + lid; k_ < ILU_LEVELS[l_ + 1]; k_ += WG) {              \
                const int i_ = ILU_ROWS[k_];                                                      \
                if (l_ < l_levels_) ILU_FORWARD_ROW(v, i_)                                        \
                else ILU_BACKWARD_ROW(i_)                                                         \
            }                                                                                     \
            SYNC();                                                                               \
        }                                                                                         \
    }
#endif
#elif PRECOND == PRECOND_ISAI
// pz = M_U (M_L v): block_ptrs holds M_L's row pointers, then M_U's; row_blocks their column
// indices, m_vals their values, M_U's from block_stride on. ISAI_ROW(out, w, i, pass): row i of
// M_L w (pass 0) or of M_U w (pass 1).
#define ISAI_ROW(out, w, i, pass)                                                                 \
    {                                                                                             \
        const int first_ = (pass) ? block_stride + block_ptrs[n + 1 + (i)] : block_ptrs[i];       \
        const int last_ = (pass) ? block_stride + block_ptrs[n + 2 + (i)] : block_ptrs[(i) + 1];  \
        value_type acc_ = 0;                                                                      \
        for (int p_ = first_; p_ < last_; ++p_) acc_ += mul(m_vals[p_], w[row_blocks[p_]]);       \
        out = acc_;                                                                               \
    }
#if WG == 1
#define PREC_PREPARE(v)                                                                           \
    {                                                                                             \
        for (int i_ = 0; i_ < n; ++i_) ISAI_ROW(ptmp[i_], v, i_, 0)                               \
        for (int i_ = 0; i_ < n; ++i_) ISAI_ROW(pz[i_], ptmp, i_, 1)                              \
    }
#else
// a loop of two passes, ptmp = M_L v then pz = M_U ptmp, each ended by a barrier (the shape of
// ILU's level loop): written out one after the other, the two passes gave wrong values inside
// Gmres's Arnoldi loop on PoCL
#define PREC_PREPARE(v)                                                                           \
    for (int pass_ = 0; pass_ < 2; ++pass_) {                                                    \
        FOR_ROWS(i_) {                                                                            \
            if (pass_) ISAI_ROW(pz[i_], ptmp, i_, 1)                                              \
            else ISAI_ROW(ptmp[i_], v, i_, 0)                                                     \
        }                                                                                         \
        SYNC();                                                                                   \
    }
#endif
#else
#define PREC_PREPARE(v)
#endif

// A vector updated, then preconditioned: UPDATE(i) writes v[i] for every row i, then USE(i, m)
// gets m = (M v)_i for every row i (both statement lists; the caller defines and undefines
// them). Where M reads other rows of v (PREC_SYNC) all of v comes first: two passes with a
// barrier and PREC_PREPARE(v) between them; otherwise one pass, row by row.
#if PREC_SYNC
#define UPDATE_THEN_PRECONDITION(v, UPDATE, USE)                                                  \
    FOR_ROWS(i) { UPDATE(i) }                                                                     \
    SYNC();                                                                                       \
    PREC_PREPARE(v);                                                                              \
    FOR_ROWS(i) {                                                                                 \
        value_type m_;                                                                            \
        PREC_ROW(m_, v, i);                                                                       \
        USE(i, m_)                                                                                \
    }
#else
#define UPDATE_THEN_PRECONDITION(v, UPDATE, USE)                                                  \
    FOR_ROWS(i) {                                                                                 \
        UPDATE(i)                                                                                 \
        value_type m_;                                                                            \
        PREC_ROW(m_, v, i);                                                                       \
        USE(i, m_)                                                                                \
    }
#endif

// The item's results, written by one work-item.
#define FINISH(its, res, reason)                                                                  \
    if (LEADER) {                                                                                 \
        iterations[item] = (its);                                                                 \
        res_norms[item] = (res);                                                                  \
        reasons[item] = (reason);                                                                 \
    }

// r = b - A x, row by row: STORE(i, r_i), then MORE(i) (statement lists: the caller's vectors
// and its further sums; NO_MORE for none) and s0 += |r_i|^2, for every row i.
#define RESIDUAL_ROWS(STORE, MORE)                                                            \
    FOR_ROWS(i) {                                                                             \
        value_type ax_;                                                                       \
        SPMV_ROW(ax_, xv, i);                                                                 \
        const value_type ri_ = bv[i] - ax_;                                                   \
        STORE(i, ri_);                                                                        \
        MORE(i)                                                                               \
        s0 += to_value(abs2(ri_));                                                            \
    }
#define NO_MORE(i)
// RESIDUAL_ROWS's MORE: s2 += |x_i| (sum |x|), and s1 += |b_i|^2 at the start
#define X_SUM(i) s2 += to_value(abs_value(xv[i]));
#define B_AND_X_SUMS(i) s1 += to_value(abs2(bv[i])); X_SUM(i)

// out = A v, row by row, each row's value also given to USE(i, out_i) (a statement list, as
// UPDATE_THEN_PRECONDITION's USE; the caller defines and undefines it).
#define MULTIPLY_ROWS(out, v, USE)                                                            \
    FOR_ROWS(i) {                                                                             \
        value_type av_;                                                                       \
        SPMV_ROW(av_, v, i);                                                                  \
        out[i] = av_;                                                                         \
        USE(i, av_)                                                                           \
    }

// The start of every batched solver: r = b - A x, each r_i given to STORE(i, r_i) (the solver's
// vectors); res = ||r||, b_norm = ||b||, x_sum = sum |x|, the item's threshold on ||r|| and its
// first status: DIVERGED for a non-finite b or r (bad input: x stays as it is), CONVERGED
// where x already meets the threshold. Declares s0, s1, s2, sums, res, b_norm, x_sum, limit, reason.
#define START_ITEM(STORE)                                                                     \
    value_type s0 = 0, s1 = 0, s2 = 0;                                                        \
    RESIDUAL_ROWS(STORE, B_AND_X_SUMS)                                                        \
    sums_type sums = SUM4(s0, s1, s2, 0);                                                     \
    real_type res = sqrt(real_part(SUM_AT(sums, 0)));                                         \
    const real_type b_norm = sqrt(real_part(SUM_AT(sums, 1)));                                \
    real_type x_sum = real_part(SUM_AT(sums, 2));                                             \
    const real_type limit = fmax(rtol * b_norm, atol);                                        \
    int reason = (!isfinite(b_norm) || !isfinite(res)) ? STATUS_DIVERGED                      \
                 : res <= limit ? STATUS_CONVERGED : STATUS_RUNNING;
