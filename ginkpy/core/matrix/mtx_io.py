"""Matrix Market I/O: ``gk.read(path, exec)`` and ``gk.write(path, op)``.

The header is checked here, so that a file ginkpy cannot hold (a vector object, a malformed
banner) is refused with a message saying why; the data is parsed by _scipy_io().mmread
(fast_matrix_market), which expands symmetric, skew-symmetric, hermitian and pattern files
into general matrices.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lazy import sp
from ginkpy.core.base.lin_op import LinOp
from ginkpy.core.matrix.coo import Coo
from ginkpy.core.matrix.csr import Csr
from ginkpy.core.matrix.dense import Dense
from ginkpy.core.matrix.ell import Ell
from ginkpy.core.matrix.hybrid import Hybrid
from ginkpy.core.matrix.sellp import Sellp

# the formats ``read`` makes by name: Csr, Dense and the sparse formats made from a Csr
READ_FORMATS = (Coo, Csr, Dense, Ell, Hybrid, Sellp)
BANNER = "%%MatrixMarket"
FORMATS = ("coordinate", "array")
FIELDS = ("real", "double", "complex", "integer", "pattern")
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
_HEADER_FORM = (f"'{BANNER} matrix <coordinate|array> <real|complex|integer|pattern> "
                f"<general|symmetric|skew-symmetric|hermitian>'")


def read(path: str | os.PathLike, exec: Executor, format: Any = "csr", dtype: Any = None) -> LinOp:
    """The matrix in the Matrix Market file ``path``, on ``exec`` (Ginkgo's ``gko::read``).

    Coordinate and array files; real, complex, integer and pattern (values 1) fields; general,
    symmetric, skew-symmetric and hermitian storage.

    Parameters
    ----------
    path : str or path-like
        The ``.mtx`` file.
    exec : Executor
        Where the matrix is made.
    format : str or class, default "csr"
        ``"csr"`` (a Csr with int32 indices), ``"dense"`` (a Dense, as for a right-hand side
        stored as an array), or any class of ``gk.matrix`` with ``from_csr``, given as the
        class or its lower-case name.
    dtype : dtype, default None
        float64 (complex128 for a complex file) unless given (float32, complex64; a complex
        file cannot be read into a real type).

    Examples
    --------
    >>> A = gk.read("A.mtx", exec)
    >>> B = gk.read("b.mtx", exec, "dense", np.float32)
    >>> E = gk.read("A.mtx", exec, gk.matrix.Ell)
    """
    if not isinstance(exec, Executor):
        raise TypeError(f"read(path, exec): exec must be an executor (gk.ReferenceExecutor(), "
                        f"gk.executor('opencl')), not {type(exec).__name__}")
    product = _format_class(format)
    field = _check_header(path)
    complex_file = field == "complex"
    dtype = exec.check_dtype((np.complex128 if complex_file else np.float64) if dtype is None else dtype)
    if complex_file and dtype.kind != "c":
        raise TypeError(f"{os.fspath(path)} holds a complex matrix, but dtype={dtype} is real: read it with "
                        f"dtype=numpy.complex128 or complex64 (the default for a complex file is complex128)")
    try:
        data = _scipy_io().mmread(path)
    except ValueError as err:
        raise ValueError(f"{os.fspath(path)} is not a valid Matrix Market file: {err}") from None
    if product is Dense:
        return Dense.from_numpy(exec, data.toarray() if sp.issparse(data) else data, dtype)
    csr = Csr.from_scipy(exec, data, dtype)
    return csr if product is Csr else product.from_csr(csr)


def write(path: str | os.PathLike, op: LinOp, symmetry: str = "general") -> None:
    """Write ``op`` to the Matrix Market file ``path`` (real or complex), with every digit
    needed to read the same values back (Ginkgo's ``gko::write``).

    Parameters
    ----------
    path : str or path-like
        The file (written as given: no ``.mtx`` is appended).
    op : LinOp
        A Dense (written as an array), a Csr or any matrix with ``to_csr()`` (as coordinates,
        its stored entries, explicit zeros included).
    symmetry : {"general", "symmetric", "skew-symmetric", "hermitian"}, default "general"
        Store only the lower triangle of a matrix that has that symmetry exactly ("hermitian":
        complex only; checked: a file that reads back as another matrix is refused).

    Examples
    --------
    >>> gk.write("x.mtx", x)
    >>> gk.write("A.mtx", A, symmetry="symmetric")
    >>> gk.read("A.mtx", exec).nnz == A.nnz
    """
    if isinstance(op, Dense):
        data = op.to_numpy()
    elif isinstance(op, Csr):
        data = op.to_scipy()
    elif isinstance(op, LinOp) and hasattr(op, "to_csr"):
        data = op.to_csr().to_scipy()
    else:
        raise TypeError(f"write needs a ginkpy matrix (gk.matrix.Dense, Csr or a format with to_csr()), "
                        f"not {type(op).__name__}")
    field = "complex" if op.dtype.kind == "c" else "real"
    if symmetry not in SYMMETRIES or symmetry == "hermitian" and field != "complex":
        raise ValueError(f"write: symmetry must be one of {', '.join(SYMMETRIES)} ('hermitian' for a complex "
                         f"matrix only), not {symmetry!r}")
    if symmetry != "general":
        mirrored = {"symmetric": data.T, "skew-symmetric": -data.T, "hermitian": data.conj().T}[symmetry]
        if data.shape[0] != data.shape[1] or abs(data - mirrored).max() != 0:
            raise ValueError(f"write: the matrix is not exactly {symmetry}, so a {symmetry} file (its lower "
                             f"triangle) would read back as another matrix: write it with symmetry='general'")
    with open(path, "wb") as f:  # an open file: mmwrite would append .mtx to a name without it
        _scipy_io().mmwrite(f, data, field=field, symmetry=symmetry)


def _format_class(format: Any) -> type:
    """The matrix class for ``format``: Csr, Dense or a class with ``from_csr``."""
    available = {cls.__name__.lower(): cls for cls in READ_FORMATS}
    if isinstance(format, str) and format.lower() in available:
        return available[format.lower()]
    if isinstance(format, type) and issubclass(format, LinOp) and (
            format in (Csr, Dense) or hasattr(format, "from_csr")):
        return format
    raise ValueError(f"read: unknown matrix format {format!r}: use one of {sorted(available)} "
                     f"or a gk.matrix class with from_csr")


def _check_header(path: str | os.PathLike) -> str:
    """The field of the Matrix Market file ``path``; a clear error unless it starts with a header
    ginkpy can read."""
    name = os.fspath(path)
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            line = f.readline()
    except FileNotFoundError:
        raise FileNotFoundError(f"Matrix Market file not found: {name}") from None
    tokens = line.split()
    if len(tokens) != 5 or tokens[0] != BANNER:
        raise ValueError(f"{name} is not a Matrix Market file: its first line must be {_HEADER_FORM}, "
                         f"but it is {line.strip()[:80]!r}")
    obj, fmt, field, symmetry = (t.lower() for t in tokens[1:])
    if obj != "matrix":
        raise ValueError(f"{name} holds a Matrix Market '{obj}', not a 'matrix': ginkpy reads matrices "
                         f"(store a vector as an n x 1 array matrix)")
    for value, allowed, what in ((fmt, FORMATS, "format"), (field, FIELDS, "field"),
                                 (symmetry, SYMMETRIES, "symmetry")):
        if value not in allowed:
            raise ValueError(f"{name}: unknown Matrix Market {what} '{value}': the header must read {_HEADER_FORM}")
    if fmt == "array" and field == "pattern":
        raise ValueError(f"{name}: an array file cannot have the field 'pattern' (only coordinate files can)")
    if symmetry == "hermitian" and field != "complex":
        raise ValueError(f"{name}: the symmetry 'hermitian' needs the field 'complex', not '{field}'")
    return field


def _scipy_io():
    import scipy.io
    return scipy.io
