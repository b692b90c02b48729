// Dense triangular solve TRSV, after the blocked design of seed 001.
// A is n x n row-major; op(A) is A or A^T, read through strides: entry (i, j) of op(A) lies at
// i * rs + j * cs, with (rs, cs) = (n, 1) for A and (1, n) for A^T (the row/column-major
// equivalence of the seed). op_lower says whether op(A) is lower triangular (lower != transpose).
// x and b are n x k row-major; one right-hand-side column per work-group row of the grid.
#include "common.cl"

// Solve the nb x nb diagonal block of op(A) at (begin, begin) for column c = group id 0:
// one work-group, the block and its part of x held in local memory, one row per step
// (forward for lower, backward for upper), barriers between steps.
__kernel void trsv_block(const int begin, const int nb, const int k, const int rs, const int cs,
                         const int op_lower, const int unit_diagonal,
                         __global const value_type* a, __global value_type* x,
                         __local value_type* ab, __local value_type* xb)
{
    const int lid = get_local_id(0);
    const int wg = get_local_size(0);
    const int c = get_group_id(0);
    for (int e = lid; e < nb * nb; e += wg) {
        const int i = e / nb, j = e % nb;
        ab[e] = a[(begin + i) * rs + (begin + j) * cs];
    }
    for (int i = lid; i < nb; i += wg) xb[i] = x[(begin + i) * k + c];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = 0; t < nb; ++t) {
        const int r = op_lower ? t : nb - 1 - t;
        // x_r = x_r / a_rr
        if (lid == 0 && !unit_diagonal) xb[r] = divide(xb[r], ab[r * nb + r]);
        barrier(CLK_LOCAL_MEM_FENCE);
        // x_i = x_i - a_ir x_r for the rows i still to solve
        const value_type xr = xb[r];
        for (int i = lid; i < nb; i += wg) {
            if (op_lower ? i > r : i < r) xb[i] -= mul(ab[i * nb + r], xr);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = lid; i < nb; i += wg) x[(begin + i) * k + c] = xb[i];
}

// The rectangular update after a solved block: x_i = x_i - op(A)[i, begin:begin+nb] x_block for
// the rows below the block (lower) or above it (upper); many work-groups, one row each
// work-item, the solved block of column c = group id 1 shared through local memory.
__kernel void trsv_update(const int n, const int begin, const int nb, const int k, const int rs,
                          const int cs, const int op_lower, __global const value_type* a,
                          __global value_type* x, __local value_type* xb)
{
    const int lid = get_local_id(0);
    const int c = get_group_id(1);
    for (int j = lid; j < nb; j += get_local_size(0)) xb[j] = x[(begin + j) * k + c];
    barrier(CLK_LOCAL_MEM_FENCE);
    const int first = op_lower ? begin + nb : 0;
    const int last = op_lower ? n : begin;
    const int i = first + get_global_id(0);
    if (i < last) {
        value_type sum = 0;
        for (int j = 0; j < nb; ++j) sum += mul(a[i * rs + (begin + j) * cs], xb[j]);
        x[i * k + c] -= sum;
    }
}
