"""The README's first solve (its "A first solve" section) with the matrix read from a Matrix Market
file, as the comment there shows (`gk.read("A.mtx", exe)`), on an executor chosen by name.

    python examples/builder_api.py [reference|opencl|default] [A.mtx]

Without a matrix file it writes a generated 2D Poisson system to a temporary A.mtx first.
"""
import argparse
import tempfile
from pathlib import Path

import numpy as np

import ginkpy as gk
from ginkpy.problems import poisson_2d

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("executor", nargs="?", default="reference",
                    help="reference | opencl | opencl:<platform>:<device> | default (default: reference)")
parser.add_argument("matrix", nargs="?", help="a Matrix Market file (default: a generated 2D Poisson system)")
args = parser.parse_args()
path = args.matrix
if path is None:
    path = str(Path(tempfile.mkdtemp()) / "A.mtx")
    gk.write(path, gk.matrix.Csr.from_scipy(gk.ReferenceExecutor(), poisson_2d(50)))

exe = gk.executor(args.executor)
A = gk.read(path, exe)
n = A.shape[0]
b_np = np.ones(n)
b = gk.matrix.Dense.from_numpy(exe, b_np)
x = gk.matrix.Dense.zeros(exe, (n, 1))

solver = (gk.solver.Cg.build()
          .with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
          .with_criteria(gk.stop.Iteration.build().with_max_iters(1000),
                         gk.stop.ResidualNorm.build().with_reduction_factor(1e-10))
          .on(exe)
          .generate(A))
logger = gk.log.Convergence()
solver.add_logger(logger)
solver.apply(b, x)
print(exe, "iterations:", logger.num_iterations, "residual norm:", logger.residual_norm,
      "stopped:", logger.stop_reason)
print("x[:5] =", x.to_numpy()[:5, 0])
