// CSR row pointers to COO row indices.
#include "common.cl"

// idxs[p] = i for ptrs[i] <= p < ptrs[i + 1]; one work-item per row
__kernel void convert_ptrs_to_idxs(const int n, __global const int* ptrs, __global int* idxs)
{
    const int i = get_global_id(0);
    if (i < n) {
        for (int p = ptrs[i]; p < ptrs[i + 1]; ++p) idxs[p] = i;
    }
}
