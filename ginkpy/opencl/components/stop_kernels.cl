// The device side of the stopping check (core/stop/stop_state.py), one work-group each.
#include "common.cl"

// the stopping check of every column on sqrt(sum over g of partials[g * k + col])
__kernel void check(const int k, const int parts, __global const value_type* partials, STOP_PARAMS,
                    __local value_type* sums, __local value_type* tmp)
{
    sum_partials(partials, parts, k, sums, tmp);
    for (int col = get_local_id(0); col < k; col += get_local_size(0)) {
        stop_check(col, k, sqrt(real_part(sums[col])), true, STOP_ARGS);
    }
}

// status = reason in the columns that still run
__kernel void stop_running(const int k, __global uchar* status, const int reason)
{
    for (int col = get_local_id(0); col < k; col += get_local_size(0)) {
        if (status[col] == STATUS_RUNNING) status[col] = (uchar)reason;
    }
}
