"""The complex-valued cases of tests/distributed/test_distributed_complex.py, run under mpiexec as those of
tests/distributed/distributed_cases.py (whose problems, ``compare`` and ``main`` they use):

    mpiexec -n 2 python tests/distributed/distributed_complex_cases.py reference [case,case,...]

Systems: the magnetic Laplacian (Hermitian positive definite: Cg, Fcg) and the damped
Helmholtz operator (complex symmetric, not Hermitian: Gmres, Bicgstab, Bicg) of
``ginkpy.problems``, with right-hand sides that have imaginary parts.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import ginkpy as gk
import ginkpy.problems
from distributed_cases import _errors, compare, compare_schwarz, criteria, jacobi, main, rank_rows, uneven


def hpd(n: int = 12) -> sp.csr_matrix:
    return ginkpy.problems.magnetic_laplacian_2d(n, shift=0.1)


def helmholtz(n: int = 12) -> sp.csr_matrix:
    return ginkpy.problems.helmholtz_2d(n)


def rhs(n: int, seed: int, cols: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (n,) if cols is None else (n, cols)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


# -- the cases -----------------------------------------------------------------------------------

def case_cg_jacobi_hpd(ex, comm):
    A = hpd()
    return compare(ex, comm, A, rhs(A.shape[0], 0), gk.distributed.Partition.uniform(A.shape[0], comm),
                   gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(jacobi()),
                   dtype=np.complex128)


def case_pipecg_jacobi_hpd(ex, comm):
    # pipelined CG: the conjugating dots of its one reduction stay complex over the ranks
    A = hpd()
    return compare(ex, comm, A, rhs(A.shape[0], 20, 2), uneven(comm, A.shape[0]),
                   gk.solver.PipeCg.build().with_criteria(*criteria()).with_preconditioner(jacobi()),
                   dtype=np.complex128)


def case_gmres_jacobi_helmholtz(ex, comm):
    A = helmholtz()
    return compare(ex, comm, A, rhs(A.shape[0], 1), uneven(comm, A.shape[0]),
                   gk.solver.Gmres.build().with_krylov_dim(30).with_criteria(*criteria())
                   .with_preconditioner(jacobi()), dtype=np.complex128)


def case_bicgstab_jacobi_helmholtz(ex, comm):
    A = helmholtz()
    return compare(ex, comm, A, rhs(A.shape[0], 2), uneven(comm, A.shape[0]),
                   gk.solver.Bicgstab.build().with_criteria(*criteria()).with_preconditioner(jacobi()),
                   dtype=np.complex128)


def case_bicg_helmholtz(ex, comm):
    # Bicg's shadow system needs A^H of the distributed matrix (entries conjugated and moved to
    # the owners of their columns) and M^H of Schwarz
    A = helmholtz(10)
    return compare(ex, comm, A, rhs(A.shape[0], 3), uneven(comm, A.shape[0]),
                   gk.solver.Bicg.build().with_criteria(*criteria()).with_preconditioner(jacobi()),
                   dtype=np.complex128)


def case_cg_schwarz_block_jacobi(ex, comm):
    # Schwarz with complex block-Jacobi on each rank's block (an HPD M: Cg applies)
    A = hpd(10)
    return compare_schwarz(ex, comm, A, rhs(A.shape[0], 4), gk.distributed.Partition.uniform(A.shape[0], comm),
                           lambda: jacobi(4), gk.solver.Cg.build().with_criteria(*criteria()), dtype=np.complex128)


def case_fcg_schwarz_cg(ex, comm):
    # an inner complex solver as the local solver (4 Cg iterations per block: flexible Cg)
    A = hpd(10)

    def inner():
        return gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(4))
    result = compare_schwarz(ex, comm, A, rhs(A.shape[0], 5), gk.distributed.Partition.uniform(A.shape[0], comm),
                             inner, gk.solver.Fcg.build().with_criteria(*criteria()), from_zero=True,
                             dtype=np.complex128)
    # Cg on each block is not Cg on the block-diagonal matrix: the counts differ, the solutions agree
    return None if result is None else result | {"iterations_differ": True}


def case_gmres_schwarz_ilu_helmholtz(ex, comm):
    A = helmholtz(10)
    return compare_schwarz(ex, comm, A, rhs(A.shape[0], 6), uneven(comm, A.shape[0]), gk.preconditioner.Ilu.build,
                           gk.solver.Gmres.build().with_krylov_dim(20).with_criteria(*criteria()),
                           dtype=np.complex128)


def case_several_columns_zero_rows(ex, comm):
    # 3 right-hand sides (one zero) from a nonzero initial guess; one rank owns no rows
    A = hpd(10)
    b = rhs(A.shape[0], 7, cols=3)
    b[:, 1] = 0
    x0 = rhs(A.shape[0], 8, cols=3)
    return compare(ex, comm, A, b, uneven(comm, A.shape[0], zero_rank=comm.size - 2),
                   gk.solver.Cg.build().with_criteria(*criteria()).with_preconditioner(jacobi()), x0=x0,
                   dtype=np.complex128)


def case_complex64(ex, comm):
    A = helmholtz(10)
    return compare(ex, comm, A, rhs(A.shape[0], 9), gk.distributed.Partition.uniform(A.shape[0], comm),
                   gk.solver.Gmres.build().with_criteria(*criteria(500, 1e-5)).with_preconditioner(jacobi()),
                   dtype=np.complex64, tol=1e-3)


def case_vector_reductions(ex, comm):
    # x^H y (conjugating) and x^T y over every rank, real norms (huge and tiny values too), all
    # the same bits on every rank; complex partial sums made global by reduce_sums
    n = 101
    partition = uneven(comm, n)
    whole, other = rhs(n, 10, cols=2), rhs(n, 11, cols=2)
    root = comm.rank == 0
    out = {}
    for dtype in (np.complex128, np.complex64):
        y = gk.distributed.Vector.from_global(ex, comm, other if root else None, partition, dtype=dtype)
        for scale in (1.0, 1e30, 1e-30):
            v = gk.distributed.Vector.from_global(ex, comm, whole * scale if root else None, partition, dtype=dtype)
            norms = v.compute_norm2()
            conj_dots = v.compute_conj_dot(y).to_numpy()[0]
            dots = v.compute_dot(y).to_numpy()[0]
            seen = comm.allgather((norms.to_numpy().tobytes(), conj_dots.tobytes(), dots.tobytes()))
            expected_norms = scale * np.linalg.norm(whole, axis=0)
            out[f"{np.dtype(dtype)} {scale}"] = {
                "same_on_every_rank": len(set(seen)) == 1, "norm_dtype": str(norms.dtype),
                "norm_error": float(np.abs(norms.to_numpy()[0] / expected_norms - 1).max()),
                "conj_dot_error": float(np.abs(conj_dots / (scale * np.sum(whole.conj() * other, axis=0)) - 1).max()),
                "dot_error": float(np.abs(dots / (scale * np.sum(whole * other, axis=0)) - 1).max())}
    # reduce_sums: a complex G x 2 partial and a real one, summed over their rows and the ranks
    A = gk.distributed.Matrix.from_global(ex, comm, hpd(6) if root else None)
    rank = comm.rank
    complex_partial = gk.matrix.Dense.from_numpy(ex, np.array([[1 + 2j, rank * 1j], [3 - 1j, rank + 0j]]))
    real_partial = gk.matrix.Dense.from_numpy(ex, np.array([[0.5, rank], [1.5, 1.0]]))
    A.reduce_sums(complex_partial, real_partial)
    ranks = np.arange(comm.size)
    out["reduce_sums"] = {
        "complex": bool(np.array_equal(complex_partial.to_numpy(),
                                       [[comm.size * (4 + 1j), ranks.sum() * (1 + 1j)], [0, 0]])),
        "real": bool(np.array_equal(real_partial.to_numpy(), [[comm.size * 2.0, ranks.sum() + comm.size], [0, 0]])),
        "dtypes": [str(complex_partial.dtype), str(real_partial.dtype)]}
    v = gk.distributed.Vector.from_global(ex, comm, whole if root else None, partition)
    gathered = v.gather()
    out["dtype"] = str(v.dtype)
    out["gather_exact"] = bool(not root or np.array_equal(gathered, whole))
    out["conj_transpose_exact"] = _conj_transpose_exact(ex, comm)
    return out if root else None


def _conj_transpose_exact(ex, comm) -> bool:
    # A^H of the distributed Helmholtz matrix (uneven partition) gathered equals scipy's A^H
    A = helmholtz(7) + sp.diags([0.5j], [3], shape=(49, 49))  # not symmetric: A^H != conj(A)
    partition = uneven(comm, A.shape[0])
    Ad = gk.distributed.Matrix.from_global(ex, comm, A if comm.rank == 0 else None, partition)
    At = Ad.conj_transpose()
    first = partition.range(comm.rank)[0]
    rows = sp.hstack([sp.csr_matrix((At.local_matrix.shape[0], first)), At.local_matrix.to_scipy(),
                      sp.csr_matrix((At.local_matrix.shape[0], A.shape[0] - first - At.local_matrix.shape[0]))]).tolil()
    non_local = At.non_local_matrix.to_scipy().tocoo()
    for i, j, v in zip(non_local.row, non_local.col, non_local.data):
        rows[i, At.ghost_columns[j]] += v
    parts = comm.gather(rows.tocsr())
    return bool(comm.rank != 0 or abs(sp.vstack(parts) - A.conj().T).max() == 0)


def case_bad_input(ex, comm):
    # real and complex mixed across the ranks or between A and b: the same error on every rank
    A = hpd(6)
    n, rank, last, partition, first, end, rows = rank_rows(comm, A)
    out = {}

    def matrix_real_on_one_rank():
        gk.distributed.Matrix.from_scipy(ex, comm, rows.real.tocsr() if rank == last else rows, partition)
    out["matrix_real_on_one_rank"] = _errors(comm, matrix_real_on_one_rank)

    def vector_real_on_one_rank():
        values = rhs(n, 12)[first:end]
        gk.distributed.Vector.from_numpy(ex, comm, values.real if rank == last else values, partition)
    out["vector_real_on_one_rank"] = _errors(comm, vector_real_on_one_rank)

    def complex_into_real():
        gk.distributed.Vector.from_numpy(ex, comm, rhs(n, 13)[first:end], partition, dtype=np.float64)
    out["complex_values_real_dtype"] = _errors(comm, complex_into_real)

    Ad = gk.distributed.Matrix.from_scipy(ex, comm, rows, partition)

    def real_rhs():
        b = gk.distributed.Vector.from_numpy(ex, comm, np.ones(end - first), partition)
        x = gk.distributed.Vector.zeros(ex, comm, partition)
        gk.solver.Cg.build().with_criteria(*criteria()).on(ex).generate(Ad).apply(b, x)
    out["complex_matrix_real_rhs"] = _errors(comm, real_rhs)
    return out if rank == 0 else None


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


if __name__ == "__main__":
    main(CASES)
