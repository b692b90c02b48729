"""A few host threads for setup work that is bound by memory bandwidth: NumPy releases the GIL
while it copies or compares arrays, so chunks of a large copy (a batch's values gathered from
many matrices) or comparison (a sparsity pattern checked) run side by side on several cores,
where one core reaches a fraction of the machine's memory bandwidth.

The pool is made at first use and again in a forked child (threads do not survive a fork).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterable

MAX_THREADS = 8  # beyond this, memory bandwidth rather than cores limits a copy
_pool: tuple[int, int, Any] | None = None  # (pid, threads, ThreadPoolExecutor)


def thread_count() -> int:
    """How many threads :func:`host_map` runs on: the machine's cores, at most :data:`MAX_THREADS`."""
    return max(1, min(MAX_THREADS, os.cpu_count() or 1))


def host_map(function: Callable[[Any], Any], items: Iterable[Any]) -> list:
    """``[function(item) for item in items]``, computed by up to :data:`MAX_THREADS` host
    threads (as many as the machine has cores); the first exception raised is raised here.

    For a few large NumPy calls each (chunks of megabytes): a Python-heavy function gains
    nothing, as it holds the GIL.

    Parameters
    ----------
    function : callable
        Called once per item.
    items : iterable
        The arguments.

    Examples
    --------
    >>> from ginkpy.core.base.host_threads import host_map
    >>> host_map(lambda s: np.array_equal(a[s:s + chunk], b[s:s + chunk]), range(0, a.size, chunk))
    [True, True, True]
    """
    global _pool
    items = list(items)
    if min(thread_count(), len(items)) <= 1:
        return [function(item) for item in items]
    if _pool is None or _pool[:2] != (os.getpid(), thread_count()):  # first use, a forked child, a new count
        import concurrent.futures
        if _pool is not None and _pool[0] == os.getpid():
            _pool[2].shutdown(wait=False)
        _pool = (os.getpid(), thread_count(),
                 concurrent.futures.ThreadPoolExecutor(thread_count(), thread_name_prefix="ginkpy-host"))
    return list(_pool[2].map(function, items))
