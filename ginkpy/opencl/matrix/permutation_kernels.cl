// Kernels of Permutation: an index array perm of length n.
#include "common.cl"

// out[perm[i]] = i; one work-item per index
__kernel void invert(const int n, __global const int* perm, __global int* out)
{
    const int i = get_global_id(0);
    if (i < n) out[perm[i]] = i;
}
