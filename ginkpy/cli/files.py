"""The files of ``ginkpy solve``: the matrix and right-hand sides read, the solution and the
plot written, and their paths checked before anything runs."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ginkpy.core.log.convergence import Convergence
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.mtx_io import read, write
from ginkpy.reference.executor import ReferenceExecutor


def file_dtype(path: str) -> np.dtype:
    """The value type a matrix file asks for: complex128 for a complex Matrix Market file,
    float64 for any other."""
    try:
        with open(path, "rb") as f:
            header = f.readline().decode("ascii", "replace").lower().split()
    except OSError:
        header = []  # reading the matrix says what is wrong
    return np.dtype(np.complex128 if "complex" in header[2:4] else np.float64)


def read_system(args: argparse.Namespace, dtype: np.dtype) -> tuple[sp.csr_matrix, np.ndarray]:
    """The matrix and the right-hand sides (--rhs, else b = A 1, whose solution is all ones),
    read on the host."""
    host = ReferenceExecutor()
    S = read(args.matrix, host, dtype=dtype).to_scipy()
    if not args.rhs:
        return S, (S @ np.ones((S.shape[1], 1), dtype)).astype(dtype)
    B = read(args.rhs, host, "dense", dtype).to_numpy()
    if B.shape[0] != S.shape[0]:
        raise ValueError(f"the right-hand side {args.rhs} has {B.shape[0]} rows but the matrix has {S.shape[0]}")
    return S, B


def write_solution(path: str, X: Dense) -> None:
    """--out: x as a Matrix Market file; an error names the option and the path."""
    try:
        write(path, X)
    except OSError as err:
        raise OSError(f"--out {path}: cannot write the solution: {err.strerror or err}") from None


def save_plot(convergence: Convergence, path: str, title: str) -> str:
    """Save the residual history as an image; returns the path written (matplotlib's default
    format, PNG, and its extension added where ``path`` has none)."""
    from matplotlib.figure import Figure
    written = path if Path(path).suffix else f"{path}.png"
    fig = Figure(figsize=(7, 4.5), layout="tight")
    convergence.plot(ax=fig.add_subplot(), title=title)
    fig.savefig(written, dpi=120)
    return written


def check_paths(args: argparse.Namespace) -> None:
    """Before anything runs: --config names a file there is, --out and --plot a folder there is."""
    if args.config and not Path(args.config).is_file():
        what = "that is a folder: give the JSON file" if Path(args.config).is_dir() else "no such file"
        raise ValueError(f"--config {args.config}: {what}")
    for option, path in (("--out", args.out), ("--plot", args.plot)):
        if path and not Path(path).resolve().parent.is_dir():
            raise ValueError(f"{option} {path}: the folder {Path(path).parent} does not exist: create it or "
                             f"write elsewhere")
        if path and Path(path).is_dir():
            raise ValueError(f"{option} {path}: that is a folder: give a file name")
