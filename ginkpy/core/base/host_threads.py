"""The host threads that ginkpy's large host-side array work runs on: bitwise comparisons
(``core/base/bitwise.py``) and ``gk.linalg``'s snapshots of a matrix (``linalg/_snapshot.py``).
A few, made at first use and kept for the process; NumPy releases the GIL in the copies and
comparisons they run, so they add the host's memory bandwidth. No task on them waits for
another."""
from __future__ import annotations

import concurrent.futures
import threading

THREADS = 4

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def host_threads() -> concurrent.futures.ThreadPoolExecutor:
    """The process's pool of THREADS host threads (made at the first call)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(THREADS, thread_name_prefix="ginkpy-host")
        return _pool
