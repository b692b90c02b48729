// Included by every ginkpy kernel source: value types and their arithmetic, the fp64 switch,
// the work-group tree sum, the index helpers of batched and sparse kernels, the reductions'
// layout and the stopping check.
// ValueType (float, double, or float2 / double2 for complex values), RealType (float or
// double), VALUE_COMPLEX (0 or 1) and IndexType (int) come from the build options.
#ifndef GINKPY_COMMON_CL  // (once, where a source includes two headers that include it)
#define GINKPY_COMMON_CL
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef ValueType value_type;
typedef RealType real_type;  // norms, thresholds, the stop state
typedef IndexType index_type;

// ---- value arithmetic: every kernel is written once for real and complex values ------------
// A complex value is a float2 / double2 (real part .x, imaginary part .y). Sums, differences,
// real multiples (r * a, a / r) and 0 work on either as they are; products, quotients,
// conjugates and magnitudes of values, and values other than 0 made from reals, go through
// these helpers, which are the plain operations for real values.
#if VALUE_COMPLEX
inline value_type mul(const value_type a, const value_type b)
{
    return (value_type)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// conj(a) b: the term of a dot product a^H b
inline value_type mul_conj(const value_type a, const value_type b)
{
    return (value_type)(a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
// a / b by Smith's method (no overflow or underflow of |b|^2 where the quotient is representable)
inline value_type divide(const value_type a, const value_type b)
{
    if (fabs(b.x) >= fabs(b.y)) {
        const real_type t = b.y / b.x, d = b.x + b.y * t;
        return (value_type)((a.x + a.y * t) / d, (a.y - a.x * t) / d);
    }
    const real_type t = b.x / b.y, d = b.y + b.x * t;
    return (value_type)((a.x * t + a.y) / d, (a.y * t - a.x) / d);
}
inline value_type conj_value(const value_type a) { return (value_type)(a.x, -a.y); }
inline real_type real_part(const value_type a) { return a.x; }
inline real_type abs2(const value_type a) { return a.x * a.x + a.y * a.y; }
inline real_type abs_value(const value_type a) { return hypot(a.x, a.y); }
inline value_type to_value(const real_type r) { return (value_type)(r, 0); }
inline bool is_zero(const value_type a) { return a.x == 0 && a.y == 0; }
inline bool is_finite_value(const value_type a) { return isfinite(a.x) && isfinite(a.y); }
#else
// macros, not functions: an expression such as s += mul(a, b) stays one expression, which the
// compiler may contract to an FMA as it did before complex values existed
#define mul(a, b) ((a) * (b))
#define mul_conj(a, b) ((a) * (b))
#define divide(a, b) ((a) / (b))
#define conj_value(a) (a)
#define real_part(a) (a)
#define abs2(a) ((a) * (a))
#define abs_value(a) fabs(a)
#define to_value(r) (r)
#define is_zero(a) ((a) == 0)
#define is_finite_value(a) isfinite(a)
#endif

// Stop status of a right-hand-side column: STATUS_RUNNING, STATUS_CONVERGED, ... come as build
// options from their one definition, StopReason in core/stop/stopping_status.py.

// The machine epsilon of value_type (of its parts).
#define EPSILON (sizeof(real_type) == 8 ? DBL_EPSILON : FLT_EPSILON)

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
#if VALUE_COMPLEX
DEFINE_LOCAL_SUM(local_sum_real, real_type)
#else
#define local_sum_real local_sum
#endif
DEFINE_LOCAL_SUM(local_sum_int, int)

// Inclusive prefix sum (Hillis-Steele) of tmp[0], ..., tmp[width - 1] in local memory, where
// each of the width work-items has written tmp[lid]; every work-item of the group calls it.
inline void local_scan_int(__local int* tmp, const int lid, const int width)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < width; d *= 2) {
        const int left = lid >= d ? tmp[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[lid] += left;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// The items (rows, aggregates, entries) of a work-item of a launch_chunks launch (launch.py):
// one on a GPU (chunk 1: neighbouring work-items take neighbouring items), a contiguous stretch
// on a CPU (work-groups of one work-item); the kernel takes the int chunk
#define FOR_ITEMS(i, count) \
    for (int i = get_global_id(0) * chunk, i##_end = min((count), i + chunk); i < i##_end; i++)

// The gaps of a shell sort of len entries (len / 2, then about 5 / 11 of the last, ending at 1):
// the sorts of one row's entries by one work-item (rows may be long, so not insertion sort)
#define FOR_SHELL_GAPS(gap, len) for (int gap = (len) > 1 ? (len) / 2 : 0; gap > 0; gap = gap == 2 ? 1 : gap * 5 / 11)

// keys[begin, end) ascending, each entry of other moved with its key; equal keys ordered by
// other (a total order: the same result whatever order the entries came in)
inline void sort_int_pairs(__global int* keys, __global int* other, const int begin, const int end)
{
    FOR_SHELL_GAPS(gap, end - begin) {
        for (int s = begin + gap; s < end; ++s) {
            const int key = keys[s], with = other[s];
            int q = s;
            while (q - gap >= begin && (keys[q - gap] > key || (keys[q - gap] == key && other[q - gap] > with))) {
                keys[q] = keys[q - gap];
                other[q] = other[q - gap];
                q -= gap;
            }
            keys[q] = key;
            other[q] = with;
        }
    }
}

// The column of entry i of a row-major n x k matrix. The k == 1 case (one right-hand side)
// skips the integer division, which a CPU device pays on every entry of an element-wise kernel.
#define COLUMN(i, k) ((k) == 1 ? 0 : (i) % (k))

// Whether work-item i of an element-wise step kernel over size entries has work: i inside the
// vectors and its column c (COLUMN(i, k)) still running; a stopped column stays untouched.
inline bool running_entry(const int i, const int c, const int size, __global const uchar* status)
{
    return i < size && status[c] == STATUS_RUNNING;
}

// The item, row and column of entry e of N batch items of n x k each (row-major, item after
// item): work-item e of a batched element-wise kernel. Declares the three names given.
#define BATCH_ENTRY(e, n, k, item, row, col)                                             \
    const int col = COLUMN(e, k);                                                       \
    const int item = (e) / ((n) * (k));                                                 \
    const int row = (e) / (k) - item * (n)

// ---- sparse rows ---------------------------------------------------------------------------

// Position of column `col` in the sorted cols[begin, end), or -1.
inline int find_column(__global const int* cols, int begin, int end, const int col)
{
    while (begin < end) {
        const int mid = begin + (end - begin) / 2;
        const int c = cols[mid];
        if (c == col) return mid;
        if (c < col) begin = mid + 1;
        else end = mid;
    }
    return -1;
}

// ---- reductions: partial sums per work-group, summed by the kernel that consumes them ------

// The layout of a kernel that sums over the n rows of n x k vectors (launch.ReductionShape):
// work-group (x, g) takes columns x * width .. and rows g * rows_per_group .. of them; its
// work-items form `lanes` rows of `width` columns: work-item (c, y) takes rows begin + y,
// begin + y + lanes, ... below end of column col (col < k only). On a CPU width = lanes = 1.
#ifndef ROWS_AT_ONCE
// rows a work-item of a streaming kernel loads before it stores (launch.rows_at_once: Cg's and
// Bicgstab's steps, the classical SpMV with its dots); kernels built without it take one
#define ROWS_AT_ONCE 1
#endif
#define REDUCTION_PARAMS const int n, const int k, const int width, const int rows_per_group
#define REDUCTION_LAYOUT                                                                 \
    const int c_ = get_local_id(0) % width;                                             \
    const int y_ = get_local_id(0) / width;                                             \
    const int lanes = get_local_size(0) / width;                                        \
    const int col = get_group_id(0) * width + c_;                                       \
    const int begin = get_group_id(1) * rows_per_group + y_;                            \
    const int end = min(n, (int)get_group_id(1) * rows_per_group + rows_per_group);     \
    const int group = get_group_id(1)
// The work-group's sum of v over its lanes, for the column of the work-item (every work-item
// must call it); tmp: local scratch of get_local_size(0) values.
#define REDUCE_LANES(v, tmp) local_sum((tmp) + c_, (v), y_, lanes, width)
// The work-item that writes its column's partial sum of the group.
#define IS_LANE_ROOT (y_ == 0 && col < k)
// The work-group's partial sums of a and (where with_b, the same in every work-item) of b over
// its lanes, for the column of the work-item, written to sums_a and sums_b at group * k + col
// (every work-item must call it).
inline void write_partial_pair(const value_type a, const value_type b, const bool with_b,
                               const int c_, const int y_, const int lanes, const int width,
                               const int col, const int k, const int group,
                               __global value_type* sums_a, __global value_type* sums_b,
                               __local value_type* tmp)
{
    const value_type t_a = local_sum(tmp + c_, a, y_, lanes, width);
    barrier(CLK_LOCAL_MEM_FENCE);
    value_type t_b = 0;
    if (with_b) t_b = local_sum(tmp + c_, b, y_, lanes, width);
    if (y_ == 0 && col < k) {
        sums_a[group * k + col] = t_a;
        if (with_b) sums_b[group * k + col] = t_b;
    }
}

// The sum of conj(a[i]) b[i] (a[i] b[i] where `conjugate` is false: Dense.compute_dot) over the
// rows begin, begin + lanes, ... below end of column col, with four independent partial sums
// (shorter dependency chains: a CPU runs a work-item's loop serially) added pairwise at the end.
inline value_type column_dot(__global const value_type* a, __global const value_type* b,
                             const int begin, const int end, const int lanes, const int k,
                             const int col, const bool conjugate)
{
#if VALUE_COMPLEX
#define COLUMN_DOT_TERM(i) (conjugate ? mul_conj(a[i], b[i]) : mul(a[i], b[i]))
#else
#define COLUMN_DOT_TERM(i) (a[i] * b[i])
#endif
    value_type acc[4] = {0, 0, 0, 0};
    int row = begin;
    for (; row + 3 * lanes < end; row += 4 * lanes) {
        for (int u = 0; u < 4; ++u) {
            const int i = (row + u * lanes) * k + col;
            acc[u] += COLUMN_DOT_TERM(i);
        }
    }
    for (; row < end; row += lanes) acc[0] += COLUMN_DOT_TERM(row * k + col);
#undef COLUMN_DOT_TERM
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// sums[j] = sum over g < parts of partials[g * stride + j] for j < count (stride >= count: the
// first count of each work-group's partial sums), into local memory, by the whole work-group (a
// power of two in size; every work-item calls it), always in the same order: every work-group of
// a kernel, and every kernel given the same partials, gets the same bits, so all agree on what
// they decide from them. tmp: local scratch of get_local_size(0) values. Ends with a barrier.
inline void sum_partials_strided(__global const value_type* partials, const int parts, const int stride,
                                 const int count, __local value_type* sums, __local value_type* tmp)
{
    const int size = get_local_size(0) * get_local_size(1);
    const int lid = get_local_id(1) * get_local_size(0) + get_local_id(0);
    int width = 1;
    while (width * 2 <= min(count, size)) width *= 2;
    const int lanes = size / width;
    const int c = lid % width, y = lid / width;
    for (int first = 0; first < count; first += width) {
        const int j = first + c;
        value_type s = 0;
        if (j < count) {
            for (int g = y; g < parts; g += lanes) s += partials[g * stride + j];
        }
        s = local_sum(tmp + c, s, y, lanes, width);
        if (y == 0 && j < count) sums[j] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// sum_partials_strided of parts x count partial sums.
inline void sum_partials(__global const value_type* partials, const int parts, const int count,
                         __local value_type* sums, __local value_type* tmp)
{
    sum_partials_strided(partials, parts, count, count, sums, tmp);
}

// ---- the stopping check on the device (core/stop/stop_state.py) -----------------------------

// The device stopping state of a solve: per column the status, the number of checks so far,
// the residual norm history (a ring of history_rows rows of k), the threshold, and the
// iteration limit.
#define STOP_PARAMS __global uchar* status, __global int* checks, __global real_type* history, \
                    const int history_rows, __global const real_type* threshold, const int max_iters
#define STOP_ARGS status, checks, history, history_rows, threshold, max_iters

// The stopping check of column col on its residual norm: converged when norm <= threshold,
// diverged when it is not finite. Every work-item that works on the column calls it with the
// same norm and so reaches the same verdict; only the `writer` records it (the history, the
// check count and a new status), and only the writer also stops the column at its iteration
// limit (checks counted so far >= max_iters): the others may then still update what the
// column no longer uses, which a kernel calling this must allow (no update of x or r after
// the check). True while the column runs on. A column stopped before is left as it is (also
// when the writer of this launch has just stopped it: same verdict).
// `converged` is the status of a column that converged: STATUS_PENDING for an estimate that the
// true residual confirms later (stop_confirm).
inline bool stop_check_as(const int col, const int k, const real_type norm, const bool writer,
                          const uchar converged, STOP_PARAMS)
{
    if (status[col] != STATUS_RUNNING) return false;
    const uchar reason = norm <= threshold[col] ? converged
                         : isfinite(norm) ? STATUS_RUNNING : STATUS_DIVERGED;
    if (writer) {
        const int h = checks[col];
        history[(h % history_rows) * k + col] = norm;
        checks[col] = h + 1;
        if (reason != STATUS_RUNNING) {
            status[col] = reason;
        } else if (h >= max_iters) {
            status[col] = STATUS_ITERATION_LIMIT;
            return false;
        }
    }
    return reason == STATUS_RUNNING;
}

inline bool stop_check(const int col, const int k, const real_type norm, const bool writer,
                       STOP_PARAMS)
{
    return stop_check_as(col, k, norm, writer, STATUS_CONVERGED, STOP_ARGS);
}

// A column PENDING (converged on an estimate) meets its true residual norm: converged if it
// meets the threshold, else it runs on (unless at its iteration limit); the writer puts the norm in place of the estimate in
// the history. True when the column runs on.
inline bool stop_confirm(const int col, const int k, const real_type norm, const bool writer,
                         STOP_PARAMS)
{
    if (status[col] != STATUS_PENDING) return false;
    const uchar reason = norm <= threshold[col] ? STATUS_CONVERGED
                         : !isfinite(norm) ? STATUS_DIVERGED
                         : checks[col] - 1 >= max_iters ? STATUS_ITERATION_LIMIT : STATUS_RUNNING;
    if (writer) {
        history[((checks[col] - 1) % history_rows) * k + col] = norm;
        status[col] = reason;
    }
    return reason == STATUS_RUNNING;
}
#endif  // GINKPY_COMMON_CL
