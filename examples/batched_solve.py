"""Implicit diffusion on many independent cells: one batched CG solve per time step.

Each of --cells cells is a small --grid x --grid mesh with its own conductivity field (as in a
subgrid model or a per-element local problem). A backward Euler step of du/dt = div(k grad u)
is the linear system (I + dt L_k) u_new = u_old per cell, L_k the cell's 5-point diffusion
operator: one sparsity pattern for every cell, different values. Every step solves all cells in
one launch with gk.batch.solver.Cg (scalar Jacobi), checks a few cells against SciPy, and the
script prints the time per step beside a loop of SciPy solves.

    python examples/batched_solve.py                         # 1000 cells of 16 x 16, 5 steps
    python examples/batched_solve.py --cells 200 --grid 8 --executor reference
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk


def diffusion_operator(grid: int, conductivity: np.ndarray) -> sp.csr_matrix:
    """The 5-point operator -div(k grad u) on a grid x grid mesh of unit spacing (zero Dirichlet
    boundary), with the conductivity k of each face the mean of its two nodes'."""
    n = grid * grid
    index = np.arange(n).reshape(grid, grid)
    k = conductivity.reshape(grid, grid)
    rows, cols, vals = [], [], []
    diag = np.zeros(n)
    for a, b, ka, kb in ((index[:, :-1], index[:, 1:], k[:, :-1], k[:, 1:]),
                         (index[:-1, :], index[1:, :], k[:-1, :], k[1:, :])):
        face = 0.5 * (ka + kb).ravel()
        rows += [a.ravel(), b.ravel()]
        cols += [b.ravel(), a.ravel()]
        vals += [-face, -face]
        np.add.at(diag, a.ravel(), face)
        np.add.at(diag, b.ravel(), face)
    # the boundary faces: a node on the edge loses heat to the fixed-temperature outside
    edges = (index[0, :], index[-1, :], index[:, 0], index[:, -1])
    for e in edges:
        np.add.at(diag, e.ravel(), k.ravel()[e.ravel()])
    rows.append(np.arange(n))
    cols.append(np.arange(n))
    vals.append(diag)
    A = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    A.sort_indices()
    return A


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--grid", type=int, default=16, help="each cell is a grid x grid mesh")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--dt", type=float, default=5.0, help="time step (large: stiff systems)")
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--executor", default="default", help="reference | opencl | opencl:<p>:<d> | default")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    exe = gk.executor(args.executor)
    n = args.grid * args.grid
    # each cell's conductivity: log-normal, smooth in x (a layered medium), different per cell
    x = np.linspace(0, 1, args.grid)
    matrices = []
    for _ in range(args.cells):
        layers = np.exp(rng.normal(0, 1) * np.sin(2 * np.pi * rng.uniform(1, 3) * x))
        field = np.outer(np.ones(args.grid), layers) * np.exp(0.3 * rng.standard_normal((args.grid, args.grid)))
        L = diffusion_operator(args.grid, field.ravel())
        matrices.append((sp.eye(n, format="csr") + args.dt * L).tocsr())
    A = gk.batch.matrix.Csr.from_scipy(exe, matrices)

    solver = (gk.batch.solver.Cg.build()
              .with_preconditioner(gk.batch.preconditioner.Jacobi.build().with_max_block_size(1))
              .with_max_iterations(1000)
              .with_tolerance(args.rtol)
              .with_tolerance_type("relative")
              .on(exe)
              .generate(A))
    logger = gk.batch.log.BatchConvergence()
    solver.add_logger(logger)

    # initial temperature: a hot spot at a random place in each cell
    ii, jj = np.meshgrid(np.arange(args.grid), np.arange(args.grid), indexing="ij")
    centres = rng.uniform(0, args.grid, (args.cells, 2))
    u = np.exp(-((ii[None] - centres[:, 0, None, None]) ** 2 + (jj[None] - centres[:, 1, None, None]) ** 2) / 4)
    u = u.reshape(args.cells, n)

    print(f"executor: {exe}")
    print(f"{args.cells} cells of {args.grid} x {args.grid} ({n} unknowns, {matrices[0].nnz} nonzeros each), "
          f"dt = {args.dt}, Jacobi-CG to rtol {args.rtol}")
    u_old = gk.batch.MultiVector.from_numpy(exe, u)
    u_new = gk.batch.MultiVector.from_numpy(exe, u)   # the old state is the initial guess
    times, first_step = [], None
    for step in range(args.steps):
        exe.synchronize()
        start = time.perf_counter()
        solver.apply(u_old, u_new)
        exe.synchronize()
        times.append(time.perf_counter() - start)
        u_old, u_new = u_new, u_old
        u_new.copy_from(u_old)
        if first_step is None:
            first_step = u_old.to_numpy()
        it = logger.num_iterations
        print(f"step {step + 1}: {times[-1] * 1e3:8.1f} ms, iterations {it.min()}-{it.max()} "
              f"(mean {it.mean():.1f}), all converged: {logger.has_converged}, "
              f"heat left {u_old.to_numpy().sum() / u.sum():.3f}")

    # the first step of a few cells against SciPy's direct solve
    worst = max(np.linalg.norm(first_step[i] - spla.spsolve(matrices[i].tocsc(), u[i])) / np.linalg.norm(first_step[i])
                for i in rng.choice(args.cells, size=min(5, args.cells), replace=False))
    print(f"first step against scipy.sparse.linalg.spsolve on 5 cells: relative error <= {worst:.1e}")
    # one step as a loop of SciPy's Jacobi-CG
    start = time.perf_counter()
    for i in range(args.cells):
        spla.cg(matrices[i], u[i], x0=u[i], rtol=args.rtol, M=sp.diags(1 / matrices[i].diagonal()))
    scipy_time = time.perf_counter() - start
    print(f"one step: ginkpy batched {np.median(times) * 1e3:.1f} ms (median), a loop of SciPy cg "
          f"{scipy_time * 1e3:.1f} ms: {scipy_time / np.median(times):.1f}x")


if __name__ == "__main__":
    main()
