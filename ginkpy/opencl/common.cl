// Included by every ginkpy kernel source: value types, the fp64 switch, stop status codes and
// the work-group tree sum.
// ValueType (float or double) and IndexType (int) come from the build options.
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef ValueType value_type;
typedef IndexType index_type;

// Stop status of a right-hand-side column (see core/stop/stopping_status.py).
#define STATUS_RUNNING 0
#define STATUS_BREAKDOWN 4

// Tree sum of v over `count` work-items (a power of two), numbered 0 <= index < count, that
// keep their values at slot[index * stride] in local memory; each of them gets the sum.
// Every work-item of the group must call it (it has barriers). A caller that reuses the slots
// afterwards needs a barrier first.
#define DEFINE_LOCAL_SUM(name, T)                                                        \
    inline T name(__local T* slot, const T v, const int index, const int count,        \
                  const int stride)                                                     \
    {                                                                                   \
        slot[index * stride] = v;                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                   \
        for (int s = count / 2; s > 0; s /= 2) {                                        \
            if (index < s) slot[index * stride] += slot[(index + s) * stride];          \
            barrier(CLK_LOCAL_MEM_FENCE);                                               \
        }                                                                               \
        return slot[0];                                                                 \
    }
DEFINE_LOCAL_SUM(local_sum, value_type)
DEFINE_LOCAL_SUM(local_sum_int, int)

// The column of entry i of a row-major n x k matrix. The k == 1 case (one right-hand side)
// skips the integer division, which a CPU device pays on every entry of an element-wise kernel.
#define COLUMN(i, k) ((k) == 1 ? 0 : (i) % (k))
