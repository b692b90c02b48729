// The preconditioner of a Krylov solver's kernels, compiled in (PRECONDITIONER): 0 none, 1
// scalar Jacobi (diag n x 1), 2 an operator of its own (its product given as a vector).
// Included, with common.cl, by cg_kernels.cl, minres_kernels.cl and pipe_cg_kernels.cl.
#include "common.cl"
#ifndef PRECONDITIONER
#define PRECONDITIONER 0  // what #if reads where it is not given
#endif

// M v at entry i (row `row`): v (none), diag v (Jacobi) or mv, the given M v (an operator)
inline value_type preconditioned_at(const int i, const int row, __global const value_type* v,
                                    __global const value_type* mv, __global const value_type* diag)
{
#if PRECONDITIONER == 0
    return v[i];
#elif PRECONDITIONER == 1
    return mul(diag[row], v[i]);
#else
    return mv[i];
#endif
}
