"""Complex systems as a new user meets them (none of them in the tests): a 1-D absorbing
Helmholtz-type system, a Hermitian positive definite B^H B + I and a diagonally dominant
non-Hermitian matrix with a random pattern, solved by SciPy's and ginkpy.linalg's cg, gmres,
bicgstab, bicg and cgs with the same call, in complex128 and complex64: info, relative residual,
error against a direct solve and time, per executor.

Each call runs twice and the second is timed, for SciPy and ginkpy alike: a first ginkpy call
compiles the OpenCL kernels and copies A to the executor (kept for the next call on the same
matrix), which a program solving many systems pays once.

    python examples/complex_vs_scipy.py [reference] [opencl] [--n 2500]
"""
import argparse
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import ginkpy.linalg as gl

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("executors", nargs="*", default=["reference", "opencl"],
                    help="the executors to run ginkpy on (default: reference opencl)")
parser.add_argument("--n", type=int, default=2500, help="rows of each system (default 2500)")
args = parser.parse_args()


def second_call(solve):
    """solve() twice; the second's result and its time in seconds (the first compiles and builds)."""
    solve()
    start = time.perf_counter()
    out = solve()
    return out, time.perf_counter() - start


rng = np.random.default_rng(7)
n = args.n
# 1. a 1-D waveguide-like complex symmetric system with an absorbing (complex) shift
lap = sp.diags([-1, 2.2, -1], [-1, 0, 1], shape=(n, n), dtype=complex)
helm = (lap - 0.05 * (1 + 0.3j) * sp.identity(n)).tocsr()
# 2. a Hermitian positive definite: B^H B + I, B random sparse complex
B = sp.random(n, n, density=2 / n, random_state=3, format="csr") * (1 + 1j) + sp.random(n, n, density=2 / n, random_state=4) * 1j
hpd = (B.conj().T @ B + sp.identity(n)).tocsr()
# 3. a non-Hermitian, diagonally dominant complex matrix with a random pattern
R = sp.random(n, n, density=5 / n, random_state=5, format="csr")
R.data = rng.standard_normal(R.nnz) + 1j * rng.standard_normal(R.nnz)
dd = (R + sp.diags((np.asarray(abs(R).sum(axis=1)).ravel() + 1) * (1.2 + 0.5j))).tocsr()
systems = {"helmholtz_1d": helm, "hpd_BhB": hpd, "diag_dominant": dd}
execs = args.executors
print(f"times: the second call of each solve (the first compiles kernels and copies A), n = {n}", flush=True)
for name, A in systems.items():
    b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    x_exact = sla.spsolve(A.tocsc(), b)
    for solver in ["cg", "gmres", "bicgstab", "bicg", "cgs"]:
        if solver == "cg" and name != "hpd_BhB":
            continue
        for dtype in (np.complex128, np.complex64):
            rtol = 1e-8 if dtype == np.complex128 else 1e-4
            Ad, bd = A.astype(dtype), b.astype(dtype)
            (xs, info_s), ts = second_call(lambda: getattr(sla, solver)(Ad, bd, rtol=rtol, maxiter=5000))
            row = [f"{name:14s} {solver:8s} {np.dtype(dtype).name:10s} scipy info {info_s:3d} res {np.linalg.norm(bd - Ad @ xs) / np.linalg.norm(bd):.1e} err {np.linalg.norm(xs - x_exact) / np.linalg.norm(x_exact):.1e} {ts*1e3:7.1f} ms"]
            for ex in execs:
                (x, info), tg = second_call(lambda: getattr(gl, solver)(Ad, bd, rtol=rtol, maxiter=5000, executor=ex))
                assert x.dtype == dtype, (x.dtype, dtype)
                row.append(f"| {ex[:3]} info {info:3d} res {np.linalg.norm(bd - Ad @ x) / np.linalg.norm(bd):.1e} err {np.linalg.norm(x - x_exact) / np.linalg.norm(x_exact):.1e} {tg*1e3:7.1f} ms")
            print(" ".join(row), flush=True)
