"""The OpenCL-against-reference helpers and the inner solvers of the short-recurrence solvers'
tests (test_bicg.py, test_cgs.py, test_fcg.py, test_idr.py, test_ir.py,
test_short_recurrence_solvers.py)."""
import numpy as np

import ginkpy as gk
from conftest import tol
from ginkpy.core.stop.stopping_status import STATUS_DTYPE, StopReason


def _inner_cg():
    return gk.solver.Cg.build().with_criteria(gk.stop.Iteration.build().with_max_iters(4))


def _inner_gmres():
    return gk.solver.Gmres.build().with_krylov_dim(10).with_criteria(gk.stop.Iteration.build().with_max_iters(5))


N, K = 301, 3  # more rows than a work-group; column 1 already stopped, column 2 meets a zero divisor


def _assert_close(device, reference, dtype, eps_factor=1):
    """Within ~10 machine epsilons (times ``eps_factor``) of the entry, or of the largest entry
    where terms cancel."""
    np.testing.assert_allclose(device, reference, rtol=eps_factor * tol(dtype),
                               atol=eps_factor * tol(dtype) * np.abs(reference).max(initial=0))


def _run_both(ref, ocl, kernel, args, status, dtype):
    """Run ``kernel`` on both executors; numpy arrays become Dense, the status (unless None)
    goes last. Returns, per executor, the host copies of the Dense arguments and the status."""
    results = []
    for exec in (ref, ocl):
        converted = [gk.matrix.Dense.from_numpy(exec, a, dtype) if isinstance(a, np.ndarray) else a
                     for a in args]
        st = () if status is None else (exec.from_host(status),)
        exec.run(kernel, *converted, *st)
        results.append(([c.to_numpy() for c in converted if isinstance(c, gk.matrix.Dense)],
                        exec.to_host(*st) if st else None))
    return results


def _check_both(ref, ocl, kernel, args, status, dtype, eps_factor=1):
    (ref_out, ref_status), (dev_out, dev_status) = _run_both(ref, ocl, kernel, args, status, dtype)
    if status is not None:
        np.testing.assert_array_equal(dev_status, ref_status)
    for d, r in zip(dev_out, ref_out):
        _assert_close(d, r, dtype, eps_factor)
    return ref_out, ref_status


def _status(k=K):
    status = np.zeros(k, STATUS_DTYPE)
    status[1] = StopReason.CONVERGED
    return status


def _vectors(rng, count, n=N, k=K):
    return [rng.standard_normal((n, k)) for _ in range(count)]


def _scalars(rng, count, k=K):
    return [rng.uniform(0.5, 2.0, (1, k)) * rng.choice([-1, 1], (1, k)) for _ in range(count)]


DTYPES = [np.float64, np.float32]
