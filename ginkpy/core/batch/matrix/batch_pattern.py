"""What the batch matrix formats share: one sparsity pattern for every item, found once on the
host when a batch is built, and the items' values gathered in one pass into the executor.

A batch comes from a list of SciPy sparse matrices (or 2-D arrays) of one pattern, from a 3-D
NumPy array (N, n, m), or from one pattern and a values array (N, nnz). :class:`HostBatch` is
the result on the host: the shared CSR pattern (columns sorted in each row, duplicates summed)
and a ``write`` function that fills rows of a (N, nnz) array with the values of those items in
that order. No work is done per item beyond taking its arrays: the pattern check compares each
item's index arrays with item 0's byte for byte (a memcmp each), the values are concatenated a
chunk of items at a time straight into the memory that goes to the executor (where that memory
is the host's, each chunk checked to be finite while it is in cache), and the reordering to the
canonical pattern (an unsorted or duplicated item 0, a CSC or COO list) is one gather per chunk.
Only items whose index arrays differ from item 0's are looked at one by one: those that store
the same entries in another order are accepted, any other is an error naming it.
"""
from __future__ import annotations

from itertools import compress
from operator import attrgetter, methodcaller
from typing import Any, Callable

import attrs
import numpy as np

from ginkpy.core.base.lazy import sp

from ginkpy.core.matrix.csr import INDEX_DTYPE
from ginkpy.core.matrix.dense import Dense, value_dtype

# the index arrays that define the stored positions of each sparse format taken without conversion
STRUCTURE = {"csr": ("indptr", "indices"), "csc": ("indptr", "indices"), "coo": ("row", "col")}
CHUNK_BYTES = 1 << 20  # values gathered and reordered this much at a time (cache-sized)
_TOBYTES = methodcaller("tobytes")


@attrs.frozen
class HostBatch:
    """A batch on the host: N items of ``shape`` sharing the CSR pattern (``row_ptrs``,
    ``col_idxs``: int32, sorted columns, no duplicates); ``write(out, start)`` fills ``out``,
    an array (rows, nnz) of ``dtype``, with the values of items start, ..., start + rows - 1
    in the pattern's order. ``verify()`` runs
    the part of the pattern check that a build leaves for later (a list's index arrays compared
    with item 0's: it runs while the values travel to the device), raising where an item's
    pattern differs; True where it found items stored in another order, whose values ``write``
    writes in the right order only from then on."""

    shape: tuple[int, int]
    num_items: int
    row_ptrs: np.ndarray
    col_idxs: np.ndarray
    dtype: np.dtype
    write: Callable[[np.ndarray, int], None]
    verify: Callable[[], bool] = lambda: False

    @property
    def nnz(self) -> int:
        return int(self.col_idxs.size)

    def values(self) -> np.ndarray:
        """The (N, nnz) values as a new host array (the pattern verified first)."""
        self.verify()
        out = np.empty((self.num_items, self.nnz), self.dtype)
        self.write(out, 0)
        return out


def upload(exec, batch: HostBatch, shape: tuple[int, ...] | None = None,
           write: Callable[[np.ndarray], None] | None = None, verify: bool = True) -> Any:
    """The values of ``batch`` on ``exec`` in one transfer (by default (N, nnz) in CSR order;
    a format gives its own ``shape`` and ``write(out)``), checked to be finite; an error
    names the first item, row and column holding a NaN or an infinity. The check runs on the
    host during the gather where the executor's choices say so (its memory is the host's: each
    chunk checked in cache, no second pass), else by one kernel on the executor. The pattern is
    verified while the values travel (a GPU's copy runs on while the host compares index
    arrays); where that finds items stored in another order, the values are written again.
    ``verify=False`` leaves that to the caller (``batch.verify()`` later, and values built
    anew where it returns True): ``gk.linalg``'s batched solvers verify during the solve."""
    dtype = exec.check_dtype(batch.dtype)
    on_host = write is None and exec.device_choices().checks_values_on_host
    shape = (batch.num_items, batch.nnz) if shape is None else shape
    finite: list[bool] = []

    def fill_rows(rows: np.ndarray, start: int) -> None:
        batch.write(rows, start)
        if on_host:
            finite.append(_all_finite(rows))  # while the chunk is in cache

    def send() -> Any:
        finite.clear()
        if write is not None:  # a format's own layout, in one piece
            return exec.upload(shape, dtype, write)
        # chunks in cache where checked on the host, else the executor's (a GPU copies each at once)
        return exec.upload_rows(shape, dtype, fill_rows, CHUNK_BYTES if on_host else None)
    values = send()
    if verify and batch.verify():
        values = send()
    size = int(np.prod(shape))
    if size and not (all(finite) if on_host else exec.run("matrix.dense.is_finite", Dense(exec, values.reshape(size, 1)))):
        check_finite(batch.values(), batch.row_ptrs, batch.col_idxs)
    return values


# -- the input forms -------------------------------------------------------------------------------

def from_list(matrices: Any, dtype: Any = None) -> HostBatch:
    """The batch of a list of SciPy sparse matrices or 2-D arrays, one per item, all of one shape
    and stored pattern (explicit zeros included); 2-D arrays only: see :func:`from_dense`."""
    if sp.issparse(matrices) or isinstance(matrices, np.ndarray) or not hasattr(matrices, "__len__"):
        raise TypeError("a batch is built from a list of SciPy sparse matrices (one per item), not "
                        f"{type(matrices).__name__}")
    items = list(matrices)
    if not items:
        raise ValueError("a batch needs at least one item: the list of matrices is empty")
    if not any(sp.issparse(m) for m in items):
        arrays = [np.asarray(m) for m in items]
        for i, a in enumerate(arrays):
            if a.ndim != 2 or a.shape != arrays[0].shape:
                raise ValueError(f"item {i} has shape {a.shape} where item 0 has {arrays[0].shape}: every item "
                                 f"of a batch must be a 2-D array of one shape")
        return from_dense(np.stack(arrays), dtype)
    items, fmt = _one_format(items)
    first = items[0]
    shape = first.shape
    data = list(map(attrgetter("data"), items))
    data_dtypes = set(map(attrgetter("dtype"), data))  # one pass, for the value type and the layout check
    if dtype is None:
        dtype = np.result_type(*data_dtypes)
    dtype = value_dtype(dtype, "matrix")
    rows, cols = _coordinates(first, fmt)
    row_ptrs, col_idxs, reorder = _canonical_order(shape, rows, cols)
    indices = {name: list(map(attrgetter(name), items)) for name in STRUCTURE[fmt]}
    # cheap first: items whose arrays have item 0's lengths and index types (the others now, one by one)
    alike = _same_layout(data, first.data, data_dtypes)
    for name, arrays in indices.items():
        alike &= _same_layout(arrays, getattr(first, name))
    replaced: dict[int, np.ndarray] = {}
    look_at = _other_orders(items, shape, row_ptrs, col_idxs, replaced)
    look_at(np.flatnonzero(~alike))
    for i in replaced:
        data[i] = np.zeros(first.data.size, first.data.dtype)  # a stand-in of item 0's layout
    verified: list[bool] = []

    def verify() -> bool:
        # the alike items' index arrays against item 0's, byte for byte (the same pattern in the same
        # order), run once, after the values left for the device; the others looked at one by one
        if not verified:
            same = alike.copy()
            for name, arrays in indices.items():
                same &= _same_bytes(arrays, getattr(first, name), alike)
            count = len(replaced)
            look_at(np.flatnonzero(alike & ~same))
            verified.append(len(replaced) > count)
        return verified[0]

    def write(out: np.ndarray, start: int) -> None:
        stop = start + out.shape[0]
        _gather(data[start:stop], reorder, out)
        for i, values in replaced.items():
            if start <= i < stop:
                out[i - start] = values

    return HostBatch(shape, len(items), row_ptrs, col_idxs, dtype, write, verify)


def _one_format(items: list) -> tuple[list, str]:
    """The items in one format of STRUCTURE (as they are where they share one, else each
    converted to CSR) and its name; items of different shapes are an error naming one."""
    if len(set(map(type, items))) == 1:  # one SciPy class, so one format: the shapes read in C (map)
        kinds = {(items[0].format, shape) for shape in set(map(attrgetter("shape"), items))}
    else:
        kinds = {(getattr(m, "format", None), getattr(m, "shape", None)) for m in items}  # one pass over the items
    fmt = getattr(items[0], "format", None)
    if fmt not in STRUCTURE or len({kind[0] for kind in kinds}) > 1:
        # another format, or several: each item converted (a loop over the items, in SciPy)
        items, fmt = [canonical(m, f"item {i}") for i, m in enumerate(items)], "csr"
    shape = items[0].shape
    if len({kind[1] for kind in kinds}) > 1:
        i = next(i for i, m in enumerate(items) if m.shape != shape)
        raise ValueError(f"every item of a batch must have the shape of item 0, but item {i} is "
                         f"{items[i].shape[0]} x {items[i].shape[1]} where item 0 is {shape[0]} x {shape[1]}")
    return items, fmt


def _other_orders(items: list, shape, row_ptrs: np.ndarray, col_idxs: np.ndarray,
                  replaced: dict) -> Callable[[np.ndarray], None]:
    """``look_at(numbers)``: each of those items (stored otherwise than item 0) converted; one
    that stores the pattern's entries in another order goes into ``replaced`` (its values in the
    pattern's order), any other is a ValueError naming it and how it differs."""
    pattern = sp.csr_matrix((np.ones(col_idxs.size), col_idxs, row_ptrs), shape=shape)

    def look_at(numbers: np.ndarray) -> None:
        for i in numbers:
            m = canonical(items[i], f"item {i}")
            how = _difference(pattern, m)
            if how:
                raise ValueError(f"every item of a batch must have the shape and sparsity pattern of item 0, "
                                 f"but item {i} {how} (an entry that is zero in some items must still be stored "
                                 f"in all; or build the batch from one pattern and a values array)")
            replaced[int(i)] = m.data
    return look_at


def from_dense(array: Any, dtype: Any = None) -> HostBatch:
    """The batch of a 3-D array (N, n, m): the pattern holds every position that is nonzero in
    some item."""
    array = np.asarray(array)
    if array.ndim != 3:
        raise ValueError(f"a batch from a NumPy array needs shape (N, n, m), got shape {array.shape}")
    N, n, m = array.shape
    if N == 0:
        raise ValueError("a batch needs at least one item: the array has N = 0 items")
    dtype = value_dtype(array.dtype if dtype is None else dtype, "matrix")
    flat = array.reshape(N, n * m)
    stored = np.zeros(n * m, dtype=bool)
    step = max(1, CHUNK_BYTES // max(flat[0].nbytes, 1))
    for start in range(0, N, step):  # chunks of items: no (N, n, m) temporary
        stored |= (flat[start:start + step] != 0).any(axis=0)
    positions = np.flatnonzero(stored)
    row_ptrs = np.zeros(n + 1, dtype=INDEX_DTYPE)
    np.cumsum(np.bincount(positions // max(m, 1), minlength=n), out=row_ptrs[1:])
    col_idxs = (positions % max(m, 1)).astype(INDEX_DTYPE)

    def write(out: np.ndarray, start: int) -> None:
        rows = flat[start:start + out.shape[0]]
        np.take(rows, positions, axis=1, out=out) if rows.dtype == out.dtype else \
            out.__setitem__(Ellipsis, rows[:, positions])

    return HostBatch((n, m), N, row_ptrs, col_idxs, dtype, write)


def from_arrays(row_ptrs: Any, col_idxs: Any, values: Any, shape: Any = None, dtype: Any = None,
                what: str = "values") -> HostBatch:
    """The batch of one CSR pattern (``row_ptrs``, ``col_idxs``, in any order within a row;
    duplicates are summed, as SciPy does) and ``values`` of shape (N, nnz), row i item i's value
    of each stored entry. ``shape`` defaults to n x n, n = len(row_ptrs) - 1."""
    row_ptrs, col_idxs = np.asarray(row_ptrs), np.asarray(col_idxs)
    if row_ptrs.ndim != 1 or row_ptrs.size < 1 or row_ptrs.dtype.kind not in "iu" or col_idxs.ndim != 1 or \
            col_idxs.dtype.kind not in "iu":
        raise ValueError("row_ptrs and col_idxs must be 1-D integer arrays (a CSR pattern: indptr and indices)")
    n = row_ptrs.size - 1
    shape = (n, n) if shape is None else (int(shape[0]), int(shape[1]))
    lengths = np.diff(row_ptrs)
    if shape[0] != n or row_ptrs[0] != 0 or row_ptrs[-1] != col_idxs.size or (lengths < 0).any():
        raise ValueError(f"row_ptrs must rise from 0 to len(col_idxs) = {col_idxs.size} over {shape[0]} rows "
                         f"(length {shape[0] + 1}), got length {row_ptrs.size} from {row_ptrs[0]} to {row_ptrs[-1]}")
    if col_idxs.size and (col_idxs.min() < 0 or col_idxs.max() >= shape[1]):
        raise ValueError(f"col_idxs must lie in [0, {shape[1]}) for {shape[1]} columns, got "
                         f"{col_idxs.min()} to {col_idxs.max()}")
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[1] != col_idxs.size:
        raise ValueError(f"{what} must have shape (N, {col_idxs.size}): one row of {col_idxs.size} stored entries "
                         f"per item, got shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError(f"a batch needs at least one item: {what} has 0 rows")
    dtype = value_dtype(values.dtype if dtype is None else dtype, what)
    rows = np.repeat(np.arange(n, dtype=INDEX_DTYPE), lengths)
    row_ptrs, col_idxs, reorder = _canonical_order(shape, rows, col_idxs)
    return HostBatch(shape, values.shape[0], row_ptrs, col_idxs, dtype,
                     lambda out, start: _gather([values[start:start + out.shape[0]]], reorder, out))


def from_scipy_pattern(pattern: Any, values: Any, dtype: Any = None) -> HostBatch:
    """The batch of a pattern given as a SciPy sparse matrix (its stored entries, in its CSR
    order, values ignored) and ``values`` (N, nnz) following that order."""
    if not sp.issparse(pattern):
        raise TypeError(f"the pattern must be a SciPy sparse matrix (its stored entries are the pattern), "
                        f"not {type(pattern).__name__}")
    m = sp.csr_matrix(pattern)
    return from_arrays(m.indptr, m.indices, values, m.shape, dtype)


# -- helpers -----------------------------------------------------------------------------------

def canonical(matrix: Any, what: str) -> sp.csr_matrix:
    """``matrix`` (SciPy sparse or 2-D NumPy) as a CSR copy with sorted indices, duplicates summed."""
    if isinstance(matrix, np.ndarray):
        if matrix.ndim != 2:
            raise ValueError(f"{what} must be 2-D, got a {matrix.ndim}-D array")
    elif not sp.issparse(matrix):
        raise TypeError(f"{what} must be a SciPy sparse matrix or a 2-D NumPy array, not {type(matrix).__name__}")
    m = sp.csr_matrix(matrix, copy=True)
    m.sum_duplicates()
    return m


def _coordinates(m: Any, fmt: str) -> tuple[np.ndarray, np.ndarray]:
    """(rows, columns) of the stored entries of ``m`` in its storage order."""
    if fmt == "coo":
        return np.asarray(m.row), np.asarray(m.col)
    outer = np.repeat(np.arange(len(m.indptr) - 1), np.diff(m.indptr))
    return (outer, m.indices) if fmt == "csr" else (m.indices, outer)


def _canonical_order(shape, rows: np.ndarray, cols: np.ndarray):
    """The canonical CSR pattern (row_ptrs, col_idxs) of entries stored at (rows, cols), and how
    values in the stored order become values in the pattern's: None (already canonical), an
    index array (values[:, order]) or (order, starts) where duplicates are summed
    (np.add.reduceat(values[:, order], starts))."""
    n = shape[0]
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    key = rows * max(shape[1], 1) + cols
    sorted_already = key.size < 2 or bool((key[1:] > key[:-1]).all())
    order = None if sorted_already else np.argsort(key, kind="stable")
    key = key if order is None else key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
    unique = key[starts] if key.size else key
    row_ptrs = np.zeros(n + 1, dtype=INDEX_DTYPE)
    np.cumsum(np.bincount(unique // max(shape[1], 1), minlength=n), out=row_ptrs[1:])
    col_idxs = (unique % max(shape[1], 1)).astype(INDEX_DTYPE)
    if starts.size == key.size:  # no duplicates
        return row_ptrs, col_idxs, order
    return row_ptrs, col_idxs, (np.arange(key.size) if order is None else order, starts)


def _same_layout(arrays: list, first: np.ndarray, dtypes: set | None = None) -> np.ndarray:
    """Whether each array has the length and dtype of ``first`` (read with the loop in C: map;
    ``dtypes``: the arrays' dtypes where known)."""
    count = len(arrays)
    same = np.fromiter(map(len, arrays), np.int64, count) == len(first)
    if len(set(map(attrgetter("dtype"), arrays)) if dtypes is None else dtypes) > 1:
        same &= np.fromiter(map(first.dtype.__eq__, map(attrgetter("dtype"), arrays)), bool, count)
    return same


def _same_bytes(arrays: list, first: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Whether each array of ``among`` (the items of ``first``'s length and dtype) holds the
    elements of ``first``: a memcmp each against ``first``'s bytes, read in place through the
    buffer protocol (bytes.startswith) with the loop over the items in C (map). This reads every
    item's array once, at memory speed. Concatenating all items' arrays into one (N, len) array
    and comparing it with ``first`` in one NumPy operation was timed and is slower: the
    concatenation alone costs what the memcmps cost. (Items that share item 0's arrays are
    views in SciPy, not the same objects: telling them apart costs more per item than the
    memcmp.)"""
    same = among.copy()
    others = list(compress(arrays, among))
    try:  # C-contiguous arrays (SciPy's): compared in place
        same[among] = np.fromiter(map(first.tobytes().startswith, others), bool, len(others))
    except (BufferError, ValueError, TypeError):  # a strided view somewhere: a contiguous copy of each
        same[among] = np.fromiter(map(first.tobytes().__eq__, map(_TOBYTES, others)), bool, len(others))
    return same


def _gather(data: list, reorder, out: np.ndarray) -> None:
    """out[i] = data[i] (1-D arrays of one length, or one (N, nnz) array as the only element)
    reordered by ``reorder`` (see :func:`_canonical_order`): one concatenation straight into
    ``out``, or chunks of items concatenated, reordered and written."""
    if reorder is None:
        if len(data) > 1:
            np.concatenate(data, out=out.reshape(-1), casting="same_kind")
        else:
            np.copyto(out, np.reshape(data[0], out.shape), casting="same_kind")
        return
    whole = np.reshape(data[0], (out.shape[0], -1)) if len(data) == 1 else None
    step = max(1, CHUNK_BYTES // max(data[0].nbytes // (out.shape[0] if whole is not None else 1), 1))
    for start in range(0, out.shape[0], step):
        chunk = whole[start:start + step] if whole is not None else \
            np.concatenate(data[start:start + step]).reshape(-1, data[0].size)
        if isinstance(reorder, tuple):  # duplicates summed
            order, starts = reorder
            out[start:start + step] = np.add.reduceat(chunk[:, order], starts, axis=1) if starts.size else 0
        else:
            out[start:start + step] = chunk[:, reorder]


def _difference(first: sp.csr_matrix, m: sp.csr_matrix) -> str:
    """How the pattern of ``m`` differs from ``first``'s ('' when it does not); both canonical."""
    if m.shape != first.shape:
        return f"is {m.shape[0]} x {m.shape[1]} where item 0 is {first.shape[0]} x {first.shape[1]}"
    lengths, first_lengths = np.diff(m.indptr), np.diff(first.indptr)
    if m.nnz == first.nnz and np.array_equal(m.indices, first.indices) and np.array_equal(lengths, first_lengths):
        return ""
    if m.nnz != first.nnz:
        detail = f"stores {m.nnz} entries where item 0 stores {first.nnz}"
    else:
        detail = "stores entries at other positions than item 0"
    rows = np.flatnonzero(lengths != first_lengths)
    if rows.size == 0:  # same row lengths: the first row whose columns differ
        rows = np.unique(np.repeat(np.arange(m.shape[0]), lengths)[m.indices != first.indices])
    r = int(rows[0])
    cols = m.indices[m.indptr[r]:m.indptr[r + 1]].tolist()
    first_cols = first.indices[first.indptr[r]:first.indptr[r + 1]].tolist()
    return f"{detail}: row {r} stores columns {_short(cols)} where item 0 stores {_short(first_cols)}"


def _short(cols: list) -> str:
    return str(cols) if len(cols) <= 8 else f"[{', '.join(map(str, cols[:8]))}, ...]"


def _all_finite(values: np.ndarray) -> bool:
    """Whether every entry of ``values`` (contiguous) is finite: one sum (a NaN or an infinity
    makes it NaN or infinite), the exact test only where the sum is not finite (NaN, infinity,
    or finite values overflowing)."""
    flat = values.reshape(-1)
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.add.reduce(flat)
    return bool(np.isfinite(total)) or bool(np.isfinite(flat).all())


def check_finite(values: np.ndarray, row_ptrs: np.ndarray | None, col_idxs: np.ndarray | None,
                 what: str = "matrix") -> None:
    """Raise ValueError naming the first item (and entry) whose values are NaN or infinite;
    ``values`` is (N, nnz) in CSR order of the pattern (row_ptrs, col_idxs), or (N, n, m)."""
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    items = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))
    i = int(items[0])
    if values.ndim == 3:
        r, c = (int(v) for v in np.argwhere(bad[i])[0])
    else:
        e = int(np.flatnonzero(bad[i])[0])
        r = int(np.searchsorted(row_ptrs, e, side="right") - 1)
        c = int(col_idxs[e])
    more = f" (and {items.size - 1} more items)" if items.size > 1 else ""
    raise ValueError(f"the {what} of item {i} has a NaN or infinite value at ({r}, {c}){more}: every value of "
                     f"every item must be finite")
