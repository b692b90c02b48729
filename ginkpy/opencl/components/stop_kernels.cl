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

// x_best = x (an n x k block, entry idx at column idx % k) in the running columns whose last
// recorded residual norm is at most best[col], and best[col] = that norm (written by the
// work-item of row 0; the others compare with <=, so that those reading it late still copy).
__kernel void keep_best(const int size, const int k, __global const value_type* x,
                        __global value_type* x_best, __global real_type* best, STOP_PARAMS)
{
    const int idx = get_global_id(0);
    if (idx >= size) return;
    const int col = idx % k;
    const int h = checks[col] - 1;
    if (status[col] != STATUS_RUNNING || h < 0) return;
    const real_type norm = history[(h % history_rows) * k + col];
    if (!(norm <= best[col])) return;
    x_best[idx] = x[idx];
    if (idx < k) best[col] = norm;
}
