// Reductions into partial sums, in the reduction layout of common.cl.
#include "common.cl"

// partials[group * count + col] = sum of conj(u[i]) x[i] over the group's rows of column col,
// and with TWO partials[group * count + k + col] the same of conj(w[i]) x[i] (count = k or 2 k)
__kernel void dots(REDUCTION_PARAMS, __global const value_type* x, __global const value_type* u,
                   __global const value_type* w, __global value_type* partials,
                   __local value_type* tmp)
{
    REDUCTION_LAYOUT;
    const int count = (1 + TWO) * k;
    value_type s = 0;
    if (col < k) s = column_dot(u, x, begin, end, lanes, k, col, true);
    s = REDUCE_LANES(s, tmp);
    if (IS_LANE_ROOT) partials[group * count + col] = s;
#if TWO
    barrier(CLK_LOCAL_MEM_FENCE);
    s = 0;
    if (col < k) s = column_dot(w, x, begin, end, lanes, k, col, true);
    s = REDUCE_LANES(s, tmp);
    if (IS_LANE_ROOT) partials[group * count + k + col] = s;
#endif
}

// partial[group] = sum over rows [g * rows_per_group, (g + 1) * rows_per_group) of
// conj(v_i[row, c]) w[row, c], for group = g * num k + i k + c (every column); a tree in local memory
__kernel void multi_dot(const int n, const int k, const int num, const int rows_per_group,
                        __global const value_type* basis, __global const value_type* w,
                        __global value_type* partial, __local value_type* tmp)
{
    const int group = get_group_id(0);
    const int pair = group % (num * k);
    const int c = pair % k;
    const int begin = group / (num * k) * rows_per_group;
    const int end = min(n, begin + rows_per_group);
    __global const value_type* v = basis + pair / k * n * k;
    value_type sum = 0;
    for (int row = begin + get_local_id(0); row < end; row += get_local_size(0)) {
        sum += mul_conj(v[row * k + c], w[row * k + c]);
    }
    sum = local_sum(tmp, sum, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) partial[group] = sum;
}

// result[j] = sum over g of partial[g * count + j]; one work-group per column
__kernel void sum_rows(const int parts, const int count, __global const value_type* partial,
                       __global value_type* result, __local value_type* tmp)
{
    const int j = get_group_id(0);
    value_type sum = 0;
    for (int g = get_local_id(0); g < parts; g += get_local_size(0)) sum += partial[g * count + j];
    sum = local_sum(tmp, sum, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) result[j] = sum;
}
