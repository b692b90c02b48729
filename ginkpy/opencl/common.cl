// Included by every ginkpy kernel source: value types and the fp64 switch.
// ValueType (float or double) and IndexType (int) come from the build options.
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef ValueType value_type;
typedef IndexType index_type;

// Stop status of a right-hand-side column (see core/stop/stopping_status.py).
#define STATUS_RUNNING 0
#define STATUS_BREAKDOWN 4
