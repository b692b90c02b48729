// The product of one row of a Csr matrix with a vector, shared by csr_kernels.cl (the vector b)
// and solver/cg_kernels.cl (the vector Cg's SpMV forms as it gathers it: M r + beta p). The
// includer may define ROW_GATHER(i, col) (the vector's entry i = col * k + c, at column col of
// A) and ROW_GATHER_PARAMS (the parameters it reads) before including it; else it is b[i].
#include "common.cl"

// The matrix's arrays, in every kernel that reads the matrix
#define CSR_PARAMS                                                                          \
    __global const index_type* restrict row_ptrs, __global const index_type* restrict col_idxs, \
    __global const value_type* restrict values

#ifndef ROW_GATHER
#define ROW_GATHER(i, col) b[(i)]
#define ROW_GATHER_PARAMS __global const value_type* restrict b
#endif

#ifndef MAX_ROW
#define MAX_ROW 0  // the classical kernels' bound on the row lengths (0: none)
#endif

// Row `row` of A times column c of the vector, its entries added in order. With MAX_ROW (4 or
// 8, at least the longest row's length: csr_strategy.py) the loop runs MAX_ROW turns, unrolled,
// the turns past the row's end doing nothing, so that the loads of all the row's entries are in
// flight at once rather than one entry's after the other's.
inline value_type row_product(const int row, const int k, const int c, CSR_PARAMS, ROW_GATHER_PARAMS)
{
    value_type sum = 0;
    const int first = row_ptrs[row], end = row_ptrs[row + 1];
#if MAX_ROW
#pragma unroll
    for (int t = 0; t < MAX_ROW; ++t) {
        const int j = first + t;
        if (j < end) sum += mul(values[j], ROW_GATHER(col_idxs[j] * k + c, col_idxs[j]));
    }
#else
    for (int j = first; j < end; ++j) sum += mul(values[j], ROW_GATHER(col_idxs[j] * k + c, col_idxs[j]));
#endif
    return sum;
}
