"""Complex systems solved as users solve them (issue 14): a damped Helmholtz system (complex
symmetric, indefinite) and a magnetic Laplacian (Hermitian positive definite), in complex64
and complex128, through the builder and through ``gk.linalg``, on the reference executor and
the OpenCL device. Each converged solve is checked against the tolerance by its true residual
in numpy, its verdict (stop reason) against the other executor's, and its solution against
SciPy's direct solve within the bound the residual gives: ||x - x*|| <= ||A^-1|| ||b - A x||.
Also: complex Matrix Market files written and read back by ginkpy and SciPy, an AMG-preconditioned
Cg, and the error for a complex b with a real ginkpy matrix."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import ginkpy as gk
from ginkpy import problems

N = 20  # grid side: 400 rows
RTOL = {np.complex64: 1e-4, np.complex128: 1e-8}
DTYPES = [np.complex64, np.complex128]
MAX_ITERS = 2000  # far above every count here, so no verdict rests on the limit


@functools.cache
def _system(kind: str) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray, float]:
    """(A, b, x* = SciPy's direct solution, ||A^-1||_2) in complex128; b = A 1 + i A t for a ramp t,
    so that the solution is complex even where A is real."""
    A = problems.helmholtz_2d(N, wavenumber=10.0, damping=0.5) if kind == "helmholtz" \
        else problems.magnetic_laplacian_2d(N, flux=0.1)
    n = A.shape[0]
    b = A @ (np.ones(n) + 1j * np.linspace(-1, 1, n))
    x_direct = spla.spsolve(A.tocsc(), b)
    inverse_norm = 1 / np.linalg.svd(A.toarray(), compute_uv=False)[-1]
    return A, b, x_direct, float(inverse_norm)


def _skip_without_fp64(exec, dtype) -> None:
    if dtype == np.complex128 and isinstance(exec, gk.OpenCLExecutor) and not exec.info.fp64:
        pytest.skip("the device has no fp64 (complex128)")


def _check_solution(kind: str, x: np.ndarray, dtype, rtol: float) -> None:
    """x solves the system ``kind``: a finite x of ``dtype`` whose true residual (in complex128)
    meets ``rtol`` up to the rounding of computing it in ``dtype``, and that differs from SciPy's direct solution by
    no more than the residual allows: ||x - x*|| <= ||A^-1|| ||b - A x|| (plus the direct
    solve's own rounding, eps cond ||x*||)."""
    A, b, x_direct, inverse_norm = _system(kind)
    assert x.dtype == dtype and np.isfinite(x).all()
    x = x.astype(np.complex128)
    residual = np.linalg.norm(b - A @ x)
    # two computations of b - A x (in dtype on the executor, in complex128 here) differ by
    # at most (longest row + 1) eps (|A| |x| + |b|) per entry
    longest = int(np.diff(A.indptr).max())
    rounding = 2 * (longest + 1) * np.finfo(dtype).eps * np.linalg.norm(abs(A) @ np.abs(x) + np.abs(b))
    assert residual <= rtol * np.linalg.norm(b) + rounding, (residual / np.linalg.norm(b), rtol)
    direct_rounding = 100 * np.finfo(np.float64).eps * inverse_norm * abs(A).sum(axis=1).max() \
        * np.linalg.norm(x_direct)
    assert np.linalg.norm(x - x_direct) <= 1.01 * inverse_norm * residual + direct_rounding


# -- the builder: every Krylov solver where it applies, with and without scalar Jacobi -----------

BUILDER_CASES = ([(name, "magnetic") for name in ("Cg", "Fcg")]
                 + [(name, "helmholtz") for name in ("Gmres", "Bicgstab", "Bicg", "Cgs", "Idr")])


def _cases(cases, dtypes=DTYPES):
    """(name, kind, dtype) of each case in each dtype but CGS in complex64: CGS squares BiCG's
    residual polynomial, and on the Helmholtz system in single precision its residual grows
    instead (SciPy's cgs too: info maxiter, residual 1e3 ||b||); see
    :func:`test_cgs_in_complex64_does_not_claim_convergence`."""
    return [pytest.param(name, kind, dtype, id=f"{name}-{np.dtype(dtype).name}") for name, kind in cases
            for dtype in dtypes if not (name.lower() == "cgs" and dtype == np.complex64)]


def _builder_solve(exec, name: str, kind: str, dtype, jacobi: bool):
    """(x, stop reason, iterations) of gk.solver.<name> on the system ``kind``."""
    A, b, _, _ = _system(kind)
    params = getattr(gk.solver, name).build().with_criteria(
        gk.stop.Iteration.build().with_max_iters(MAX_ITERS),
        gk.stop.ResidualNorm.build().with_reduction_factor(RTOL[dtype]))
    if jacobi:
        params.with_preconditioner(gk.preconditioner.Jacobi.build().with_max_block_size(1))
    solver = params.on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype))
    log = gk.log.Convergence(history=False)
    solver.add_logger(log)
    x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1), dtype)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b, dtype), x)
    return x.to_numpy()[:, 0], log.stop_reasons[0], log.num_iterations


@pytest.mark.parametrize("jacobi", [False, True], ids=["plain", "jacobi"])
@pytest.mark.parametrize("name, kind, dtype", _cases(BUILDER_CASES))
def test_builder_solves_complex_systems_with_one_verdict(ref, ocl, name, kind, jacobi, dtype):
    _skip_without_fp64(ocl, dtype)
    verdicts = []
    for exec in (ref, ocl):
        x, reason, iterations = _builder_solve(exec, name, kind, dtype, jacobi)
        assert reason == gk.stop.StopReason.CONVERGED, (type(exec).__name__, reason, iterations)
        # a solver confirms convergence on the true residual b - A x before it stops
        _check_solution(kind, x, dtype, RTOL[dtype])
        verdicts.append((reason, iterations))
    (reason_ref, iters_ref), (reason_dev, iters_dev) = verdicts
    assert reason_dev == reason_ref
    # rounding order changes a Krylov method's path a little, not its verdict
    assert max(iters_ref, iters_dev) <= 2 * min(iters_ref, iters_dev) + 5, verdicts


# -- gk.linalg: a SciPy complex csr and a complex numpy b, as a SciPy user calls it --------------

LINALG_CASES = [("cg", "magnetic")] + [(name, "helmholtz") for name in ("gmres", "bicgstab", "bicg", "cgs")]


@pytest.mark.parametrize("M", [None, "jacobi"], ids=["plain", "jacobi"])
@pytest.mark.parametrize("name, kind, dtype", _cases(LINALG_CASES))
def test_linalg_solves_complex_systems_as_scipy(ref, ocl, name, kind, M, dtype):
    _skip_without_fp64(ocl, dtype)
    A, b, _, _ = _system(kind)
    A, b = A.astype(dtype), b.astype(dtype)
    infos = []
    for exec in (ref, ocl):
        x, info = getattr(gk.linalg, name)(A, b, rtol=RTOL[dtype], M=M, maxiter=MAX_ITERS, executor=exec)
        # info 0 promises the true residual meets the tolerance (computed in dtype by ginkpy)
        assert info == 0, (type(exec).__name__, info)
        _check_solution(kind, x, dtype, RTOL[dtype])
        infos.append(info)
    x_scipy, info_scipy = getattr(spla, name)(A, b, rtol=RTOL[dtype], maxiter=MAX_ITERS)
    assert info_scipy == 0 and infos == [0, 0]


@pytest.mark.parametrize("M", [None, "jacobi"], ids=["plain", "jacobi"])
def test_cgs_in_complex64_does_not_claim_convergence(exec, M):
    """Where CGS diverges (see :func:`_cases`), ginkpy says so as SciPy does: info != 0."""
    A, b, _, _ = _system("helmholtz")
    A, b = A.astype(np.complex64), b.astype(np.complex64)
    _, info_scipy = spla.cgs(A, b, rtol=RTOL[np.complex64], maxiter=MAX_ITERS)
    x, info = gk.linalg.cgs(A, b, rtol=RTOL[np.complex64], M=M, maxiter=MAX_ITERS, executor=exec)
    assert info_scipy != 0 and info != 0


def test_linalg_promotes_a_real_matrix_with_a_complex_b(exec):
    """A real SciPy matrix and a complex b solve in complex128, as numpy promotes them."""
    A, _, _, _ = _system("magnetic")
    S = problems.poisson_2d(N)
    b = S @ (np.ones(S.shape[0]) + 1j * np.linspace(-1, 1, S.shape[0]))
    _skip_without_fp64(exec, np.complex128)
    x, info = gk.linalg.cg(S, b, rtol=1e-8, executor=exec)
    assert info == 0 and x.dtype == np.complex128
    assert np.linalg.norm(b - S @ x) <= 1e-8 * np.linalg.norm(b) * (1 + 1e-6)
    np.testing.assert_allclose(x, spla.spsolve(S.tocsc(), b), rtol=1e-5)


def test_complex_b_with_a_real_ginkpy_matrix_is_a_clear_type_error(exec):
    S = problems.poisson_2d(5)
    A = gk.matrix.Csr.from_scipy(exec, S)
    b = np.ones(S.shape[0]) * (1 + 1j)
    with pytest.raises(TypeError, match=r"b is complex.*real value type float64.*complex dtype"):
        gk.linalg.cg(A, b, executor=exec)
    with pytest.raises(TypeError, match=r"x0 is complex.*complex dtype"):
        gk.linalg.gmres(A, b.real, x0=b, executor=exec)
    solver = gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(5)).on(exec).generate(A)
    with pytest.raises(TypeError, match=r"operator is float64 but b is complex128.*dtype=float64"):
        solver.apply(gk.matrix.Dense.from_numpy(exec, b), gk.matrix.Dense.zeros(exec, (S.shape[0], 1), np.complex128))


# -- Matrix Market: complex files written and read back, then solved ----------------------------

def _header(path) -> str:
    with open(path, encoding="ascii") as f:
        return f.readline().strip()


@pytest.mark.parametrize("dtype", DTYPES, ids=["complex64", "complex128"])
def test_complex_general_file_written_by_ginkpy_reads_back_identically(exec, tmp_path, dtype):
    _skip_without_fp64(exec, dtype)
    A, b, _, _ = _system("helmholtz")
    A = A.astype(dtype)
    path = tmp_path / "helmholtz.mtx"
    gk.write(path, gk.matrix.Csr.from_scipy(exec, A))
    assert _header(path) == "%%MatrixMarket matrix coordinate complex general"
    by_scipy = sp.csr_matrix(scipy.io.mmread(path))
    by_ginkpy = gk.read(path, exec, dtype=dtype)
    assert by_ginkpy.dtype == dtype
    for B in (by_scipy, by_ginkpy.to_scipy()):
        B = B.astype(dtype)
        B.sort_indices()
        np.testing.assert_array_equal(B.indptr, A.indptr)
        np.testing.assert_array_equal(B.indices, A.indices)
        np.testing.assert_array_equal(B.data, A.data)  # every digit written
    solver = (gk.solver.Gmres.build()
              .with_criteria(gk.stop.Iteration.build().with_max_iters(MAX_ITERS),
                             gk.stop.ResidualNorm.build().with_reduction_factor(RTOL[dtype]))
              .on(exec).generate(by_ginkpy))
    x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1), dtype)
    solver.apply(gk.matrix.Dense.from_numpy(exec, b, dtype), x)
    _check_solution("helmholtz", x.to_numpy()[:, 0], dtype, RTOL[dtype])


def test_hermitian_file_reads_back_as_the_whole_matrix(exec, tmp_path):
    """A hermitian file stores the lower triangle; ginkpy and SciPy both expand it to A (the
    upper triangle conjugated), and Cg solves the result."""
    _skip_without_fp64(exec, np.complex128)
    A, b, _, _ = _system("magnetic")
    path = tmp_path / "magnetic.mtx"
    gk.write(path, gk.matrix.Csr.from_scipy(exec, A), symmetry="hermitian")
    assert _header(path) == "%%MatrixMarket matrix coordinate complex hermitian"
    with open(path, encoding="ascii") as f:  # the lower triangle only
        size_line = next(line for line in f if not line.startswith("%"))
    assert int(size_line.split()[2]) == (A.nnz + A.shape[0]) // 2
    by_ginkpy = gk.read(path, exec)
    assert by_ginkpy.dtype == np.complex128
    for B in (sp.csr_matrix(scipy.io.mmread(path)), by_ginkpy.to_scipy()):
        assert abs(B - A).max() == 0
    x, info = gk.linalg.cg(by_ginkpy, b, rtol=1e-8, maxiter=MAX_ITERS)
    assert info == 0
    _check_solution("magnetic", x, np.complex128, 1e-8)


def test_writing_a_matrix_without_the_symmetry_asked_for_is_refused(ref, tmp_path):
    helmholtz = gk.matrix.Csr.from_scipy(ref, _system("helmholtz")[0])  # symmetric, not Hermitian
    with pytest.raises(ValueError, match="not exactly hermitian.*symmetry='general'"):
        gk.write(tmp_path / "h.mtx", helmholtz, symmetry="hermitian")
    gk.write(tmp_path / "h.mtx", helmholtz, symmetry="symmetric")
    assert abs(gk.read(tmp_path / "h.mtx", ref).to_scipy() - helmholtz.to_scipy()).max() == 0
    with pytest.raises(ValueError, match="'hermitian' for a complex matrix only"):
        gk.write(tmp_path / "p.mtx", gk.matrix.Csr.from_scipy(ref, problems.poisson_2d(3)), symmetry="hermitian")


# -- multigrid: Pgm AMG as Cg's preconditioner on the magnetic Laplacian -------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=["complex64", "complex128"])
def test_amg_preconditioned_cg_on_the_magnetic_laplacian(ref, ocl, dtype):
    """Builder (Multigrid with Pgm, its default) and gk.linalg (M="amg") agree on both executors
    and take fewer iterations than Jacobi-Cg."""
    _skip_without_fp64(ocl, dtype)
    A, b, _, _ = _system("magnetic")
    rtol = RTOL[dtype]
    iterations = []
    for exec in (ref, ocl):
        solver = (gk.solver.Cg.build().with_preconditioner(gk.solver.Multigrid.build())
                  .with_criteria(gk.stop.Iteration.build().with_max_iters(MAX_ITERS),
                                 gk.stop.ResidualNorm.build().with_reduction_factor(rtol))
                  .on(exec).generate(gk.matrix.Csr.from_scipy(exec, A, dtype)))
        log = gk.log.Convergence(history=False)
        solver.add_logger(log)
        x = gk.matrix.Dense.zeros(exec, (A.shape[0], 1), dtype)
        solver.apply(gk.matrix.Dense.from_numpy(exec, b, dtype), x)
        assert log.stop_reasons[0] == gk.stop.StopReason.CONVERGED
        _check_solution("magnetic", x.to_numpy()[:, 0], dtype, rtol)
        iterations.append(log.num_iterations)
        x, info = gk.linalg.cg(A.astype(dtype), b.astype(dtype), rtol=rtol, M="amg", executor=exec)
        assert info == 0
        _check_solution("magnetic", x, dtype, rtol)
    _, _, jacobi_iterations = _builder_solve(ref, "Cg", "magnetic", dtype, jacobi=True)
    assert max(iterations) <= 2 * min(iterations) + 5 and max(iterations) < jacobi_iterations, \
        (iterations, jacobi_iterations)
