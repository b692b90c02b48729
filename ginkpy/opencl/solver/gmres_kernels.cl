// Kernels of Gmres. Vectors are n x k row-major (entry (row, c) at row * k + c, `size` = n k);
// basis vector i starts at basis + i * size; h_{i,j} of column c is
// hessenberg[i * hess_stride + j * k + c] (hess_stride = m k); g, cos, sin, h and y hold
// entry i of column c at i * k + c. A column takes part in a cycle's steps while its stop
// status is 0 and its residual estimate is nonzero; the others are left untouched.
#include "common.cl"

#define ACTIVE(c) (status[c] == STATUS_RUNNING && estimate[c] != 0)

// v_0 = v = r / ||r|| (0 where ||r|| = 0);  g_0 = estimate = ||r||;  inner = 0 in every column
__kernel void restart(const int size, const int k, __global const value_type* r,
                      __global const value_type* r_norm, __global value_type* basis,
                      __global value_type* v, __global value_type* g,
                      __global value_type* estimate, __global int* inner,
                      __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (i < k) inner[c] = 0;
    if (status[c] != STATUS_RUNNING) return;
    const value_type norm = r_norm[c];
    const value_type value = norm != 0 ? r[i] / norm : 0;
    v[i] = value;
    basis[i] = value;
    if (i < k) {
        g[c] = norm;
        estimate[c] = norm;
    }
}

// partial[group] = sum over rows [g * rows_per_group, (g + 1) * rows_per_group) of
// v_i[row, c] w[row, c], for group = g * num k + i k + c (every column); a tree in local memory
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
        sum += v[row * k + c] * w[row * k + c];
    }
    sum = local_sum(tmp, sum, get_local_id(0), get_local_size(0), 1);
    if (get_local_id(0) == 0) partial[group] = sum;
}

// w = w - sum_{i < num} h_i v_i;  H[0:num, j] = h (accumulate: H[0:num, j] += h)
__kernel void orthogonalize(const int size, const int k, const int num, const int hess_stride,
                            const int j, const int accumulate, __global const value_type* basis,
                            __global const value_type* h, __global value_type* w,
                            __global value_type* hessenberg, __global const value_type* estimate,
                            __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (!ACTIVE(c)) return;
    value_type value = w[i];
    for (int b = 0; b < num; ++b) {
        value -= h[b * k + c] * basis[b * size + i];
    }
    w[i] = value;
    if (i < k) {
        for (int b = 0; b < num; ++b) {
            __global value_type* entry = hessenberg + b * hess_stride + j * k + c;
            *entry = accumulate ? *entry + h[b * k + c] : h[b * k + c];
        }
    }
}

// v_{j+1} = v = w / ||w|| (0 where ||w|| = 0: happy breakdown)
__kernel void next_basis(const int size, const int k, const int j, __global const value_type* w,
                         __global const value_type* w_norm, __global value_type* basis,
                         __global value_type* v, __global const value_type* estimate,
                         __global const uchar* status)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    if (!ACTIVE(c)) return;
    const value_type value = w_norm[c] != 0 ? w[i] / w_norm[c] : 0;
    v[i] = value;
    basis[(j + 1) * size + i] = value;
}

// One work-item per column: h_{j+1,j} = ||w||; rotations 0..j-1 applied to H[:, j]; rotation j
// zeroes h_{j+1,j}; g_{j+1} = -sin_j g_j, g_j = cos_j g_j; estimate = |g_{j+1}|; inner += 1.
// A zero diagonal after the rotations (singular Hessenberg matrix) is a breakdown.
__kernel void givens(const int size, const int k, const int j, const int hess_stride,
                     __global const value_type* w_norm, __global value_type* hessenberg,
                     __global value_type* g, __global value_type* cos_,
                     __global value_type* sin_, __global value_type* estimate,
                     __global int* inner, __global uchar* status)
{
    const int c = get_global_id(0);
    if (c >= size || !ACTIVE(c)) return;
    __global value_type* h = hessenberg + j * k + c;  // h[i * hess_stride] = h_{i,j}
    h[(j + 1) * hess_stride] = w_norm[c];
    for (int i = 0; i < j; ++i) {
        const value_type ci = cos_[i * k + c];
        const value_type si = sin_[i * k + c];
        const value_type a = h[i * hess_stride];
        const value_type b = h[(i + 1) * hess_stride];
        h[i * hess_stride] = ci * a + si * b;
        h[(i + 1) * hess_stride] = -si * a + ci * b;
    }
    const value_type a = h[j * hess_stride];
    const value_type b = h[(j + 1) * hess_stride];
    const value_type diag = hypot(a, b);
    if (diag == 0) {
        status[c] = STATUS_BREAKDOWN;
        return;
    }
    const value_type cj = a / diag;
    const value_type sj = b / diag;
    cos_[j * k + c] = cj;
    sin_[j * k + c] = sj;
    h[j * hess_stride] = diag;
    h[(j + 1) * hess_stride] = 0;
    const value_type gj = g[j * k + c];
    g[(j + 1) * k + c] = -sj * gj;
    g[j * k + c] = cj * gj;
    estimate[c] = fabs(sj * gj);
    inner[c] += 1;
}

// One work-item per column: y = R^-1 g by back substitution, R the leading inner x inner
// triangle of H
__kernel void solve_krylov(const int size, const int k, const int hess_stride,
                           __global const value_type* hessenberg, __global const value_type* g,
                           __global const int* inner, __global value_type* y)
{
    const int c = get_global_id(0);
    if (c >= size) return;
    for (int i = inner[c] - 1; i >= 0; --i) {
        __global const value_type* row = hessenberg + i * hess_stride + c;  // row[l * k] = h_{i,l}
        value_type value = g[i * k + c];
        for (int l = i + 1; l < inner[c]; ++l) {
            value -= row[l * k] * y[l * k + c];
        }
        y[i * k + c] = value / row[i * k];
    }
}

// out = sum_{i < inner} y_i v_i, every column (0 where inner = 0)
__kernel void multi_axpy(const int size, const int k, __global const value_type* basis,
                         __global const value_type* y, __global const int* inner,
                         __global value_type* out)
{
    const int i = get_global_id(0);
    if (i >= size) return;
    const int c = COLUMN(i, k);
    value_type value = 0;
    for (int b = 0; b < inner[c]; ++b) {
        value += y[b * k + c] * basis[b * size + i];
    }
    out[i] = value;
}
