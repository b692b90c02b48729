// What the Krylov solvers share (Gmres, CbGmres, Gcr): the storage of a Krylov basis (vector l at
// basis + l * stride), its dot products with a vector in one pass (a GEMV with the conjugate
// transpose) and its updates (a GEMV), in the GPU and the CPU layout (REDUCTION_LAYOUT). Include
// after common.cl; DOTS (the GPU's dot products per work-item and turn), DOT_ROWS (its rows per
// turn) and CPU_LAYOUT come from the launcher (components/krylov_basis.py).
//
// The storage type (CbGmres keeps the basis in a lower precision than the value type;
// core/solver/cb_gmres.py): STORAGE 0 the value type itself, 1 float (float2 for complex values)
// under double values, 2 half (pairs of halves for complex values) through vload_half /
// vstore_half, which every OpenCL device has (half is then only a storage format: no half
// arithmetic). load_basis(p, i) gives entry i as a value_type; store_basis(p, i, v) rounds v to
// the nearest representable entry (ties to even), as numpy's astype does.
#if STORAGE == 0
typedef value_type storage_type;
#define load_basis(p, i) ((p)[i])
#define store_basis(p, i, v) ((p)[i] = (v))
#elif STORAGE == 1
#if VALUE_COMPLEX
typedef float2 storage_type;
#define load_basis(p, i) convert_double2((p)[i])
#define store_basis(p, i, v) ((p)[i] = convert_float2_rte(v))
#else
typedef float storage_type;
#define load_basis(p, i) ((double)(p)[i])
#define store_basis(p, i, v) ((p)[i] = convert_float_rte(v))
#endif
#elif STORAGE == 2
typedef half storage_type;
#if VALUE_COMPLEX
inline value_type load_basis(__global const half* p, const int i)
{
    const float2 h = vload_half2(i, p);
    return (value_type)(h.x, h.y);
}
#define store_basis(p, i, v) vstore_half2_rte((v), (i), (p))
#else
#define load_basis(p, i) ((value_type)vload_half((i), (p)))
#define store_basis(p, i, v) vstore_half_rte((v), (i), (p))
#endif
#else
#error "STORAGE must be 0 (the value type), 1 (float) or 2 (half)"
#endif

// The layout of REDUCTION_LAYOUT, passed on to basis_dots.
#define LAYOUT_ARGS k, width, lanes, c_, y_, col, begin, end, group
#define LAYOUT_PARAMS const int k, const int width, const int lanes, const int c_, const int y_, \
                      const int col, const int begin, const int end, const int group

// The GPU layout: this work-group's partial sums of conj(v_l) . w over its rows, l = first .. first + DOTS - 1
// below num (v_l: basis vector l; l == num with `self`: w . w), into partial[group * count + l k
// + col]: one read of w and of DOTS basis vectors, then a tree over the lanes of the DOTS sums of
// each column at once in red (DOTS x the work-group's size: value (y, u, c) at (y DOTS + u) width
// + c), each stage adding up to 8 lanes in place. Every work-item calls it (barriers).
inline void basis_dots(const int first, const int num, const bool self, LAYOUT_PARAMS,
                       __global const storage_type* basis, const int stride,
                       __global const value_type* w, __global value_type* partial,
                       const int count, __local value_type* red)
{
    value_type acc[DOTS];
    for (int u = 0; u < DOTS; ++u) acc[u] = 0;
    if (col < k) {
        int row = begin;
#if DOT_ROWS > 1
        // DOT_ROWS rows per turn of the loop: more loads in flight per work-item
        for (; row + (DOT_ROWS - 1) * lanes < end; row += DOT_ROWS * lanes) {
            value_type w_r[DOT_ROWS];
            for (int t = 0; t < DOT_ROWS; ++t) w_r[t] = w[(row + t * lanes) * k + col];
            for (int u = 0; u < DOTS; ++u) {
                const int l = first + u;
                if (l < num) {
                    for (int t = 0; t < DOT_ROWS; ++t) {
                        const int i = (row + t * lanes) * k + col;
                        acc[u] += mul_conj(load_basis(basis, l * stride + i), w_r[t]);
                    }
                } else if (self && l == num) {
                    for (int t = 0; t < DOT_ROWS; ++t) acc[u] += to_value(abs2(w_r[t]));
                }
            }
        }
#endif
        for (; row < end; row += lanes) {
            const int i = row * k + col;
            const value_type w_i = w[i];
            for (int u = 0; u < DOTS; ++u) {
                const int l = first + u;
                if (l < num) {
                    acc[u] += mul_conj(load_basis(basis, l * stride + i), w_i);
                } else if (self && l == num) {
                    acc[u] += to_value(abs2(w_i));
                }
            }
        }
    }
    const int size = width * lanes;
    const int pairs = DOTS * width;  // (u, c)
    for (int u = 0; u < DOTS; ++u) red[(y_ * DOTS + u) * width + c_] = acc[u];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int rest = lanes; rest > 1;) {
        const int add = min(rest, 8);  // rest and add are powers of two
        rest /= add;
        const int span = pairs * rest;
        for (int e = get_local_id(0); e < span; e += size) {
            value_type s = red[e];
            for (int i = 1; i < add; ++i) s += red[e + i * span];
            red[e] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int u = y_; u < DOTS; u += lanes) {
        const int l = first + u;
        if (col < k && (l < num || (self && l == num))) partial[group * count + l * k + col] = red[u * width + c_];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// ---- the CPU layout (CPU_LAYOUT: one work-item per work-group over a contiguous stretch of rows) --
// A work-item takes its rows in blocks of CPU_BLOCK that stay in its cache, and in each block one
// basis vector after the other: a dot product or an update over contiguous memory (k = 1), which a
// CPU compiler turns into vector instructions, where the GPU layout's loop over all basis
// vectors per row would make one long dependency chain per row.
#define CPU_BLOCK 256
#define CPU_DOTS 32  // the dot products a CPU work-item keeps at once

// conj(v) . w over rows [r0, r1) of column col, v at index `offset` of the basis: four partial
// sums (independent chains), added pairwise.
inline value_type stretch_dot(__global const storage_type* v, const int offset,
                              __global const value_type* w, const int r0, const int r1,
                              const int k, const int col)
{
    value_type a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int row = r0;
    for (; row + 3 < r1; row += 4) {
        const int i = row * k + col;
        a0 += mul_conj(load_basis(v, offset + i), w[i]);
        a1 += mul_conj(load_basis(v, offset + i + k), w[i + k]);
        a2 += mul_conj(load_basis(v, offset + i + 2 * k), w[i + 2 * k]);
        a3 += mul_conj(load_basis(v, offset + i + 3 * k), w[i + 3 * k]);
    }
    for (; row < r1; ++row) a0 += mul_conj(load_basis(v, offset + row * k + col), w[row * k + col]);
    return (a0 + a1) + (a2 + a3);
}

// w . w over rows [r0, r1) of column col, as stretch_dot.
inline value_type stretch_norm2(__global const value_type* w, const int r0, const int r1, const int k,
                                const int col)
{
    real_type a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int row = r0;
    for (; row + 3 < r1; row += 4) {
        const int i = row * k + col;
        a0 += abs2(w[i]);
        a1 += abs2(w[i + k]);
        a2 += abs2(w[i + 2 * k]);
        a3 += abs2(w[i + 3 * k]);
    }
    for (; row < r1; ++row) a0 += abs2(w[row * k + col]);
    return to_value((a0 + a1) + (a2 + a3));
}

// basis_dots for all l < num (and l == num with `self`) in the CPU layout.
inline void cpu_basis_dots(const int num, const bool self, const int k, const int col, const int begin,
                           const int end, const int group, __global const storage_type* basis,
                           const int stride, __global const value_type* w,
                           __global value_type* partial, const int count)
{
    if (col >= k) return;
    value_type acc[CPU_DOTS];
    const int total = num + self;
    for (int first = 0; first < total; first += CPU_DOTS) {
        const int last = min(total, first + CPU_DOTS);
        for (int l = first; l < last; ++l) acc[l - first] = 0;
        for (int r0 = begin; r0 < end; r0 += CPU_BLOCK) {
            const int r1 = min(end, r0 + CPU_BLOCK);
            for (int l = first; l < last; ++l) {
                acc[l - first] += l < num ? stretch_dot(basis, l * stride, w, r0, r1, k, col)
                                          : stretch_norm2(w, r0, r1, k, col);
            }
        }
        for (int l = first; l < last; ++l) partial[group * count + l * k + col] = acc[l - first];
    }
}

// x = (x - sum over l < num of coef[l k + col] v_l) * scale over rows [begin, end) of column col,
// in blocks of CPU_BLOCK rows; returns the sum of |x|^2 (the CPU layout of the updates).
inline real_type cpu_basis_update(const int num, __local const value_type* coef,
                                  const real_type scale, const int k, const int col,
                                  const int begin, const int end,
                                  __global const storage_type* basis, const int stride,
                                  __global const value_type* x_in, __global value_type* x_out)
{
    value_type buf[CPU_BLOCK];
    real_type s = 0;
    for (int r0 = begin; r0 < end; r0 += CPU_BLOCK) {
        const int len = min(end - r0, CPU_BLOCK);
        for (int r = 0; r < len; ++r) buf[r] = x_in[(r0 + r) * k + col];
        for (int l = 0; l < num; ++l) {
            const value_type c = coef[l * k + col];
            const int offset = l * stride + r0 * k + col;
            for (int r = 0; r < len; ++r) buf[r] -= mul(c, load_basis(basis, offset + r * k));
        }
        for (int r = 0; r < len; ++r) {
            const value_type value = buf[r] * scale;
            x_out[(r0 + r) * k + col] = value;
            s += abs2(value);
        }
    }
    return s;
}
