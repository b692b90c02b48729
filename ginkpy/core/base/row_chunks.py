"""Ranges of rows of a host array filled a chunk at a time (``Executor.upload_rows``): a
chunk small enough to stay in cache while it is filled and checked, or a GPU's copy of one
chunk overlapping the filling of the next."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def fill_in_chunks(host: np.ndarray, fill_rows: Callable[[np.ndarray, int], None], chunk_bytes: int | None) -> None:
    """``fill_rows(host[start:stop], start)`` over the leading axis of ``host``, chunks of about
    ``chunk_bytes`` (None: one chunk); nothing for an empty ``host``."""
    for start, stop in row_chunks(host.shape, host.dtype, chunk_bytes):
        fill_rows(host[start:stop], start)


def row_chunks(shape: tuple[int, ...], dtype: Any, chunk_bytes: int | None) -> list[tuple[int, int]]:
    """(start, stop) ranges of the leading axis of an array of ``shape`` and ``dtype``, about
    ``chunk_bytes`` each (at least one row; None: all rows in one); none where it is empty."""
    rows = shape[0] if shape else 1
    if rows == 0 or int(np.prod(shape)) == 0:
        return []
    row_bytes = int(np.prod(shape[1:])) * np.dtype(dtype).itemsize
    step = rows if chunk_bytes is None else max(1, chunk_bytes // max(row_bytes, 1))
    return [(start, min(start + step, rows)) for start in range(0, rows, step)]


