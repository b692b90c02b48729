"""The loop forms of Gmres' basis kernels on their own (float64, one column, ``N`` rows, default
1e6): the dot products of 17 and 31 basis vectors with a branch per vector around its loads
(``dots_cond``, the form of components/krylov_basis.cl) against a full chunk's loads
unconditional (``dots_full``, c9ce17c's), and the update w - V h taking vectors in pairs
(``update_pairs``, solver/gmres_kernels.cl's) against UNROLL at once (``update_unrolled``,
c9ce17c's); for DOTS, rows per
turn, UNROLL and 4 or 8 work-groups per compute unit. Each result is checked against numpy; times
are kernel times from profiling events (the median of 30 launches). The kernels here are
simplified copies of the loops (no storage types, no complex values, no second stage), for
comparing the forms, not the solver: ``bench_cg.py --solver gmres`` times that. A warning: the
forms this found faster made the solver slower (c9ce17c, reverted by 6ce4868: ``orthogonalize``
79.1 against 60.7 us an inner iteration on an H100; docs/performance.md, seventh session).

    N=1000000 python benchmarks/bench_basis_loops.py
"""
import os, sys, time
import numpy as np
import pyopencl as cl

N = int(os.environ.get("N", "1000000"))
SRC = r"""
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double value_type;
#define LANES 256
inline void tree(__local double* red, double* acc, __global double* partial, int first, int count_valid, int num_out)
{
    const int lid = get_local_id(0);
    for (int u = 0; u < DOTS; ++u) red[lid * DOTS + u] = acc[u];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int rest = LANES; rest > 1;) {
        const int add = min(rest, 8);
        rest /= add;
        const int span = DOTS * rest;
        for (int e = lid; e < span; e += LANES) {
            double s = red[e];
            for (int i = 1; i < add; ++i) s += red[e + i * span];
            red[e] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid < DOTS && first + lid < count_valid) partial[get_group_id(0) * num_out + first + lid] = red[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
}

// rows row, row + LANES, ... < end one at a time, a branch per vector (both forms' last rows)
inline void dots_rows_cond(int row, const int end, const int first, const int num, __global const double* basis,
                           const int stride, __global const double* w, double* acc)
{
    for (; row < end; row += LANES) {
        const double w_i = w[row];
        for (int u = 0; u < DOTS; ++u) {
            const int l = first + u;
            if (l < num) acc[u] += basis[l * stride + row] * w_i;
            else if (l == num) acc[u] += w_i * w_i;
        }
    }
}

// the current form: loads under if (l < num)
__kernel void dots_cond(const int n, const int chunk, const int num, __global const double* basis, const int stride,
                        __global const double* w, __global double* partial, __local double* red)
{
    const int begin = get_group_id(0) * chunk, end = min(n, begin + chunk), lid = get_local_id(0);
    for (int first = 0; first <= num; first += DOTS) {
        double acc[DOTS];
        for (int u = 0; u < DOTS; ++u) acc[u] = 0;
        int row = begin + lid;
        for (; row + (DOT_ROWS - 1) * LANES < end; row += DOT_ROWS * LANES) {
            double w_r[DOT_ROWS];
            for (int t = 0; t < DOT_ROWS; ++t) w_r[t] = w[row + t * LANES];
            for (int u = 0; u < DOTS; ++u) {
                const int l = first + u;
                if (l < num) {
                    for (int t = 0; t < DOT_ROWS; ++t) acc[u] += basis[l * stride + row + t * LANES] * w_r[t];
                } else if (l == num) {
                    for (int t = 0; t < DOT_ROWS; ++t) acc[u] += w_r[t] * w_r[t];
                }
            }
        }
        dots_rows_cond(row, end, first, num, basis, stride, w, acc);
        tree(red, acc, partial, first, num + 1, 64);
    }
}

// full chunks with every load unconditional; the last chunk as before
__kernel void dots_full(const int n, const int chunk, const int num, __global const double* restrict basis, const int stride,
                        __global const double* restrict w, __global double* restrict partial, __local double* red)
{
    const int begin = get_group_id(0) * chunk, end = min(n, begin + chunk), lid = get_local_id(0);
    for (int first = 0; first <= num; first += DOTS) {
        double acc[DOTS];
        for (int u = 0; u < DOTS; ++u) acc[u] = 0;
        int row = begin + lid;
        if (first + DOTS <= num) {
            __global const double* v = basis + first * stride;
            for (; row + (DOT_ROWS - 1) * LANES < end; row += DOT_ROWS * LANES) {
                double w_r[DOT_ROWS], v_r[DOTS][DOT_ROWS];
                for (int t = 0; t < DOT_ROWS; ++t) w_r[t] = w[row + t * LANES];
                for (int u = 0; u < DOTS; ++u)
                    for (int t = 0; t < DOT_ROWS; ++t) v_r[u][t] = v[u * stride + row + t * LANES];
                for (int u = 0; u < DOTS; ++u)
                    for (int t = 0; t < DOT_ROWS; ++t) acc[u] += v_r[u][t] * w_r[t];
            }
            for (; row < end; row += LANES) {
                const double w_i = w[row];
                for (int u = 0; u < DOTS; ++u) acc[u] += v[u * stride + row] * w_i;
            }
        } else {
            dots_rows_cond(row, end, first, num, basis, stride, w, acc);
        }
        tree(red, acc, partial, first, num + 1, 64);
    }
}

// the update: x = (w - sum_l h_l v_l) * inv, pairs of l (the current form)
__kernel void update_pairs(const int n, const int chunk, const int num, __global const double* basis, const int stride,
                           __global const double* w, __global const double* h, __global double* x)
{
    const int begin = get_group_id(0) * chunk, end = min(n, begin + chunk), lid = get_local_id(0);
    int row = begin + lid;
    for (; row + (UPDATE_ROWS - 1) * LANES < end; row += UPDATE_ROWS * LANES) {
        double a0[UPDATE_ROWS], a1[UPDATE_ROWS];
        for (int t = 0; t < UPDATE_ROWS; ++t) { a0[t] = w[row + t * LANES]; a1[t] = 0; }
        int l = 0;
        for (; l + 1 < num; l += 2) {
            const double h0 = h[l], h1 = h[l + 1];
            for (int t = 0; t < UPDATE_ROWS; ++t) {
                a0[t] -= h0 * basis[l * stride + row + t * LANES];
                a1[t] -= h1 * basis[(l + 1) * stride + row + t * LANES];
            }
        }
        for (int t = 0; t < UPDATE_ROWS; ++t) {
            if (l < num) a0[t] -= h[l] * basis[l * stride + row + t * LANES];
            x[row + t * LANES] = a0[t] + a1[t];
        }
    }
    for (; row < end; row += LANES) {
        double a0 = w[row], a1 = 0; int l = 0;
        for (; l + 1 < num; l += 2) { a0 -= h[l] * basis[l * stride + row]; a1 -= h[l + 1] * basis[(l + 1) * stride + row]; }
        if (l < num) a0 -= h[l] * basis[l * stride + row];
        x[row] = a0 + a1;
    }
}

// the update, UNROLL vectors at once with their loads unconditional (the rest one by one)
__kernel void update_unrolled(const int n, const int chunk, const int num, __global const double* restrict basis, const int stride,
                              __global const double* restrict w, __global const double* restrict h, __global double* restrict x)
{
    const int begin = get_group_id(0) * chunk, end = min(n, begin + chunk), lid = get_local_id(0);
    int row = begin + lid;
    for (; row + (UPDATE_ROWS - 1) * LANES < end; row += UPDATE_ROWS * LANES) {
        double a[UNROLL][UPDATE_ROWS];
        for (int t = 0; t < UPDATE_ROWS; ++t) { a[0][t] = w[row + t * LANES]; for (int u = 1; u < UNROLL; ++u) a[u][t] = 0; }
        int l = 0;
        for (; l + UNROLL <= num; l += UNROLL) {
            double v_r[UNROLL][UPDATE_ROWS];
            for (int u = 0; u < UNROLL; ++u)
                for (int t = 0; t < UPDATE_ROWS; ++t) v_r[u][t] = basis[(l + u) * stride + row + t * LANES];
            for (int u = 0; u < UNROLL; ++u)
                for (int t = 0; t < UPDATE_ROWS; ++t) a[u][t] -= h[l + u] * v_r[u][t];
        }
        for (; l < num; ++l)
            for (int t = 0; t < UPDATE_ROWS; ++t) a[0][t] -= h[l] * basis[l * stride + row + t * LANES];
        for (int t = 0; t < UPDATE_ROWS; ++t) {
            double s = a[0][t];
            for (int u = 1; u < UNROLL; ++u) s += a[u][t];
            x[row + t * LANES] = s;
        }
    }
    for (; row < end; row += LANES) {
        double a0 = w[row]; int l = 0;
        for (; l < num; ++l) a0 -= h[l] * basis[l * stride + row];
        x[row] = a0;
    }
}
"""

def main() -> None:
    plat = [p for p in cl.get_platforms()]
    dev = None
    for p in plat:
        for d in p.get_devices():
            if d.type & cl.device_type.GPU: dev = d
    if dev is None: dev = plat[0].get_devices()[0]
    ctx = cl.Context([dev]); q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    cu = dev.max_compute_units
    print(dev.name, cu, "units", flush=True)
    rng = np.random.default_rng(0)
    m = 32
    basis_h = rng.standard_normal((m, N)); w_h = rng.standard_normal(N); h_h = rng.standard_normal(64)
    mf = cl.mem_flags
    basis = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=basis_h)
    w = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=w_h)
    h = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=h_h)
    x = cl.Buffer(ctx, mf.READ_WRITE, N * 8)
    for groups_per_unit in (4, 8):
        groups = groups_per_unit * cu
        chunk = -(-N // groups)
        partial = cl.Buffer(ctx, mf.READ_WRITE, groups * 64 * 8)
        for dots, rows in ((8, 2), (8, 4), (16, 2), (4, 4)):
            prg = cl.Program(ctx, SRC).build(options=[f"-DDOTS={dots}", f"-DDOT_ROWS={rows}", "-DUPDATE_ROWS=2", "-DUNROLL=4"])
            for kname in ("dots_cond", "dots_full"):
                kern = getattr(prg, kname)
                for num in (16, 30):
                    def launch():
                        return kern(q, (groups * 256,), (256,), np.int32(N), np.int32(chunk), np.int32(num), basis, np.int32(N), w, partial,
                                    cl.LocalMemory(dots * 256 * 8))
                    launch(); q.finish()
                    ts = []
                    for _ in range(30):
                        ts.append(launch())
                    q.finish()
                    t = np.median([(e.profile.end - e.profile.start) * 1e-9 for e in ts])
                    res = np.empty(groups * 64); cl.enqueue_copy(q, res, partial)
                    got = res.reshape(groups, 64)[:, :num + 1].sum(axis=0)
                    want = np.concatenate([basis_h[:num] @ w_h, [w_h @ w_h]])
                    ok = np.allclose(got, want, rtol=1e-10, atol=1e-8 * np.abs(want).max())
                    nbytes = (num + 1) * N * 8 * 1.0 + (num + 1) // dots * 0
                    print(f"gpu/unit {groups_per_unit} DOTS {dots:2d} ROWS {rows} {kname:<10} num {num:2d}: {t*1e6:7.1f} us, "
                          f"{(num + 1) * N * 8 / t / 1e9:6.0f} GB/s {'ok' if ok else 'WRONG'}", flush=True)
        for ur, un in ((2, 4), (2, 8), (4, 4), (1, 8), (4, 2)):
            prg = cl.Program(ctx, SRC).build(options=["-DDOTS=8", "-DDOT_ROWS=2", f"-DUPDATE_ROWS={ur}", f"-DUNROLL={un}"])
            for kname in ("update_pairs", "update_unrolled"):
                if kname == "update_pairs" and un != 4: continue
                kern = getattr(prg, kname)
                for num in (16, 30):
                    def launch():
                        return kern(q, (groups * 256,), (256,), np.int32(N), np.int32(chunk), np.int32(num), basis, np.int32(N), w, h, x)
                    launch(); q.finish()
                    ts = [launch() for _ in range(30)]; q.finish()
                    t = np.median([(e.profile.end - e.profile.start) * 1e-9 for e in ts])
                    res = np.empty(N); cl.enqueue_copy(q, res, x)
                    ok = np.allclose(res, w_h - h_h[:num] @ basis_h[:num], rtol=1e-12, atol=1e-10)
                    print(f"gpu/unit {groups_per_unit} UPDATE_ROWS {ur} UNROLL {un} {kname:<16} num {num:2d}: {t*1e6:7.1f} us, "
                          f"{(num + 2) * N * 8 / t / 1e9:6.0f} GB/s {'ok' if ok else 'WRONG'}", flush=True)

main()
