// Kernels of Gcrotmk: one work-item per entry of the n x k vectors (entry (row, c) at
// row * k + c); cc and cr are 1 x k scalars in the value type.
#include "common.cl"

// per column, with cc = cx^H cx and cr = cx^H r: where cc > 0 (and both finite):
// c_slot = cx / sqrt(cc), u_slot = u / sqrt(cc), x = x + (cr / cc) u; elsewhere (a column
// that took no step in the cycle, or not finite) the slots and x as they are; a running or pending column whose cc or cr is not finite (the
// cycle's correction overflowed) diverged (written by work-item c < k)
__kernel void recycle(const int size, const int k, __global const value_type* cc,
                      __global const value_type* cr, __global const value_type* cx,
                      __global const value_type* u, __global value_type* x,
                      __global value_type* c_slot, __global value_type* u_slot,
                      __global uchar* status)
{
    const int i = get_global_id(0);
    if (i < k && !(isfinite(real_part(cc[i])) && is_finite_value(cr[i]))
        && (status[i] == STATUS_RUNNING || status[i] == STATUS_PENDING))
        status[i] = STATUS_DIVERGED;
    if (i >= size) return;
    const int c = COLUMN(i, k);
    const real_type norm2 = real_part(cc[c]);
    if (!(isfinite(norm2) && norm2 > 0 && is_finite_value(cr[c]))) return;
    const real_type inv = 1 / sqrt(norm2);
    const value_type u_i = u[i];
    c_slot[i] = cx[i] * inv;
    u_slot[i] = u_i * inv;
    x[i] += mul(cr[c] / norm2, u_i);
}
