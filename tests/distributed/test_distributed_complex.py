"""gk.distributed with complex values: the cases of tests/distributed/distributed_complex_cases.py under
``mpiexec -n 2`` and ``-n 3`` (launched as tests/distributed/test_distributed.py launches its own: once per
rank count and executor, skipped where mpiexec, mpi4py or the OpenCL device is missing), each
solve against the serial ginkpy solve and numpy's direct solve of the same system.
"""
from __future__ import annotations

import pytest

from test_distributed import HERE, RANKS, _check_solve, case_names, launches

CASES_FILE = HERE / "distributed_complex_cases.py"
# the OpenCL run (PoCL starts in seconds per rank): every case but the bad input (host checks)
OPENCL_CASES = ["cg_jacobi_hpd", "pipecg_jacobi_hpd", "gmres_jacobi_helmholtz", "bicgstab_jacobi_helmholtz", "bicg_helmholtz",
                "cg_schwarz_block_jacobi", "fcg_schwarz_cg", "gmres_schwarz_ilu_helmholtz",
                "several_columns_zero_rows", "complex64", "vector_reductions"]


@pytest.fixture(scope="module")
def runs():
    return launches(CASES_FILE, OPENCL_CASES)


SOLVE_CASES = [name for name in case_names(CASES_FILE) if name not in ("vector_reductions", "bad_input")]


def _check_complex_solve(record: dict, ranks: int) -> None:
    """As the real solves (the serial solve's iterations and solution), in the value type asked
    for, and within the tolerance of numpy's direct solve (reduction 1e-10: 1e-7 for these
    well-conditioned systems; complex64, reduction 1e-5: 1e-3)."""
    assert not any(record["errors"]), record["errors"]
    result = record["result"]
    _check_solve(result, ranks)
    assert result["dtype"] in ("complex64", "complex128"), result
    assert result["exact_error"] <= result["tol"], result
    assert result["preconditioner"] == "Schwarz", result


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("case", SOLVE_CASES)
def test_complex_solve_matches_serial_and_numpy(runs, ranks, case):
    _check_complex_solve(runs(ranks, "reference")[case], ranks)


@pytest.mark.slow  # the complex OpenCL launch (PoCL starts per rank): the fast tier runs the real one
@pytest.mark.parametrize("case", [c for c in OPENCL_CASES if c in SOLVE_CASES])
def test_complex_solve_matches_serial_and_numpy_opencl(runs, case):
    _check_complex_solve(runs(2, "opencl")[case], 2)


def _check_reductions(record: dict) -> None:
    assert not any(record["errors"]), record["errors"]
    result = record["result"]
    for dtype, real, eps in (("complex128", "float64", 1e-15), ("complex64", "float32", 1e-6)):
        for scale in ("1.0", "1e+30", "1e-30"):
            seen = result[f"{dtype} {scale}"]
            assert seen["same_on_every_rank"], seen
            assert seen["norm_dtype"] == real, seen  # norms are real
            # rounding of 101-term sums: a few tens of epsilons (any summation order)
            assert seen["norm_error"] < 20 * eps, seen
            assert seen["conj_dot_error"] < 50 * eps and seen["dot_error"] < 50 * eps, seen
    assert result["reduce_sums"] == {"complex": True, "real": True, "dtypes": ["complex128", "float64"]}
    assert result["dtype"] == "complex128" and result["gather_exact"] and result["conj_transpose_exact"]


@pytest.mark.parametrize("ranks", RANKS)
def test_complex_vector_reductions(runs, ranks):
    _check_reductions(runs(ranks, "reference")["vector_reductions"])


@pytest.mark.slow  # the complex OpenCL launch (PoCL starts per rank): the fast tier runs the real one
def test_complex_vector_reductions_opencl(runs):
    _check_reductions(runs(2, "opencl")["vector_reductions"])


@pytest.mark.parametrize("ranks", RANKS)
def test_mixed_real_and_complex_raises_on_every_rank(runs, ranks):
    record = runs(ranks, "reference")["bad_input"]
    assert not any(record["errors"]), record["errors"]
    expected = {"matrix_real_on_one_rank": "some ranks pass complex values and others real ones",
                "vector_real_on_one_rank": "some ranks pass complex values and others real ones",
                "complex_values_real_dtype": "imaginary parts would be lost",
                "complex_matrix_real_rhs": "operator is complex128 but b is float64"}
    for name, words in expected.items():
        raised = record["result"][name]
        assert len(raised) == ranks and all(r is not None for r in raised), (name, raised)
        assert all(r == raised[0] for r in raised), (name, raised)  # the same error everywhere
        assert raised[0][0] == "TypeError" and words in raised[0][1], (name, raised)
