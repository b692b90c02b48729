"""Whole single-shot solves at the SciPy door (issue 32): A's upload enqueued without waiting and
its snapshot taken in the background (both done before the call returns), b written without
waiting, the reads before the loop counted, and the checks that moved still raising."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.solver.loop.monitor import IterationMonitor
from ginkpy.linalg import _snapshot
from ginkpy.problems import poisson_2d

# blocking reads of a whole gk.linalg.cg(A, b, M="jacobi") from x0 = 0 before its loop starts: A's
# finiteness (once, though the solver and Jacobi both check it), Jacobi's count of diagonal
# entries it could not invert, ||b|| (||r0|| is the same: not read again); on the host's
# executor only ||b|| counts (its other "reads" are no copies)
READS_BEFORE_LOOP = {"reference": 1, "opencl": 3}


def _reads_before_loop(exec, monkeypatch, S, b) -> int:
    at_loop = []
    run = IterationMonitor.run

    def marked(self, *args, **kwargs):
        at_loop.append(exec.counters["reads"])
        return run(self, *args, **kwargs)
    monkeypatch.setattr(IterationMonitor, "run", marked)
    gk.linalg.clear_cache()
    before = exec.counters["reads"]
    x, info = gk.linalg.cg(S, b, rtol=1e-8, M="jacobi", executor=exec)
    assert info == 0 and np.linalg.norm(b - S @ x) <= 1e-8 * np.linalg.norm(b)
    return at_loop[0] - before


def test_reads_before_the_loop_of_a_whole_solve(exec, monkeypatch):
    monkeypatch.setenv("GINKPY_SMALL_SYSTEMS", "0")
    S = poisson_2d(20).tocsr()
    b = S @ np.ones(S.shape[0])
    assert _reads_before_loop(exec, monkeypatch, S, b) <= READS_BEFORE_LOOP[exec.backend]


def test_a_whole_solve_leaves_a_and_b_to_the_caller_when_it_returns(exec, monkeypatch):
    # the snapshot is taken in chunks (made small here) and A's upload and b's write are done
    # when the call returns: changing A and b then changes neither this solve nor the next's
    monkeypatch.setattr(_snapshot, "CHUNK_BYTES", 64)
    S = poisson_2d(12).tocsr()
    b = S @ np.ones(S.shape[0])
    gk.linalg.clear_cache()
    x, info = gk.linalg.cg(S, b, rtol=1e-10, M="jacobi", executor=exec)
    np.testing.assert_allclose(x, np.ones(S.shape[0]), rtol=1e-8)
    S.data *= 2.0  # in place: the kept solver must see it
    b[:] = S @ np.full(S.shape[0], 3.0)
    x, info = gk.linalg.cg(S, b, rtol=1e-10, M="jacobi", executor=exec)
    np.testing.assert_allclose(x, np.full(S.shape[0], 3.0), rtol=1e-8)
    S = S + sp.eye(S.shape[0], format="csr")  # another matrix object: its own solver
    x, info = gk.linalg.cg(S, b, rtol=1e-10, M="jacobi", executor=exec)
    assert info == 0 and np.linalg.norm(b - S @ x) <= 1e-9 * np.linalg.norm(b)

def test_a_snapshot_in_chunks_is_a_bitwise_copy(monkeypatch, rng):
    monkeypatch.setattr(_snapshot, "CHUNK_BYTES", 1000)
    arrays = [rng.integers(0, 1 << 30, 12345).astype(np.int32), rng.random(4321), np.array([np.nan, -0.0, 1.0])]
    snapshot = _snapshot.Snapshot(arrays)
    copies = snapshot.arrays
    for a, c in zip(arrays, copies):
        assert c is not a and c.dtype == a.dtype and np.array_equal(a.view(np.uint8), c.view(np.uint8))


def test_from_scipy_async_gives_the_matrix_once_its_copies_are_done(exec, rng):
    S = sp.random(300, 300, density=0.05, format="csr", random_state=np.random.default_rng(2)) + sp.eye(300)
    A, copies = Csr.from_scipy_async(exec, S)
    for event in copies:
        event.wait()
    assert (A.to_scipy() != S).nnz == 0
    with pytest.raises(TypeError, match="scipy.sparse matrix"):
        Csr.from_scipy_async(exec, [[1.0]])


def test_a_small_write_takes_the_values_of_its_call(ocl):
    # small writes are copied and not waited for: changing the host array after the call
    # changes nothing on the device
    device = ocl.alloc((7,), np.float64)
    host = np.arange(7.0)
    ocl.write(device, host)
    host[:] = -1.0
    np.testing.assert_array_equal(ocl.to_host(device), np.arange(7.0))


def test_a_matrix_with_nan_is_refused_once_checked_and_after_new_values(exec):
    S = poisson_2d(6).tocsr()
    A = Csr.from_scipy(exec, S)
    assert A.is_finite() and A.is_finite()  # (the second from the cache)
    values = S.data.copy()
    values[3] = np.nan
    A.update_values(values)  # new values: checked again
    assert not A.is_finite()
    S.data[3] = np.nan
    gk.linalg.clear_cache()
    with pytest.raises(ValueError, match="NaN or Inf"):
        gk.linalg.cg(S, np.ones(S.shape[0]), M="jacobi", executor=exec)
