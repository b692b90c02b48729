"""Dense: a row-major n x k matrix; also the vectors (k right-hand sides) and the per-column
scalars (1 x k) of the solvers."""
from __future__ import annotations

from typing import Any

import numpy as np

from ginkpy.core.base.executor import Executor
from ginkpy.core.base.lin_op import LinOp, register_dense
from ginkpy.core.base.types import VALUE_TYPES, real_dtype
from ginkpy.core.matrix.permutation import Permutation, permute


def value_dtype(dtype: Any, what: str = "array") -> np.dtype:
    """The value type ginkpy stores for input of ``dtype``: float32, float64, complex64 and
    complex128 stay, integers and booleans become float64, anything else (float16, long double,
    objects) is refused."""
    dtype = np.dtype(dtype)
    if dtype in VALUE_TYPES:
        return dtype
    if dtype.kind in "iub":
        return np.dtype(np.float64)
    raise TypeError(f"{what} has value type {dtype}, which ginkpy does not support: use float32, float64, "
                    f"complex64 or complex128")


def check_convertible(source: Any, target: Any, what: str = "the values") -> None:
    """Refuse to store complex values in a real value type (their imaginary parts would be lost)."""
    source, target = np.dtype(source), np.dtype(target)
    if source.kind == "c" and target.kind != "c":
        raise TypeError(f"{what} are complex ({source}) but the requested value type {target} is real: the "
                        f"imaginary parts would be lost; request a complex type (complex64 or complex128), or "
                        f"pass the real part (array.real) yourself")


class Dense(LinOp):
    """A dense n x k matrix in row-major order on an executor (Ginkgo's ``matrix::Dense``):
    ``values`` is the executor's array of shape (n, k) (numpy on the reference executor,
    pyopencl on OpenCL).

    The vectors of every solve: right-hand sides b and solutions x (k columns solve k systems
    at once), and scalars as 1 x 1 or 1 x k. Also a small dense system matrix. Make one with
    :meth:`from_numpy`, :meth:`zeros` or :meth:`full`; read it back with :meth:`to_numpy`.

    Parameters
    ----------
    exec : Executor
        Where ``values`` lives.
    values : array
        The executor's 2-D array (numpy.ndarray or pyopencl.array.Array).

    Examples
    --------
    >>> b = gk.matrix.Dense.from_numpy(exec, np.ones(5))      # 5 x 1
    >>> x = gk.matrix.Dense.zeros(exec, (5, 1))
    >>> x.to_numpy()[:, 0]
    """

    def __init__(self, exec: Executor, values: Any) -> None:
        super().__init__(exec, values.shape, values.dtype)
        self.values = values

    # -- creation ----------------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, exec: Executor, array: Any, dtype: Any = None) -> "Dense":
        """From a numpy array (1-D gives n x 1, 2-D gives n x k), copied to ``exec``."""
        array = np.asarray(array)
        if array.ndim == 1:
            array = array[:, None]
        if array.ndim != 2:
            raise ValueError(f"Dense.from_numpy needs a 1-D or 2-D array, got {array.ndim}-D")
        dtype = exec.check_dtype(value_dtype(array.dtype if dtype is None else dtype))
        check_convertible(value_dtype(array.dtype), dtype, "the array's values")
        return cls(exec, exec.from_host(np.ascontiguousarray(array, dtype=dtype)))

    @classmethod
    def from_pyopencl(cls, exec: Executor, array: Any, dtype: Any = None) -> "Dense":
        """A ``pyopencl.array.Array`` (1-D gives n x 1, 2-D n x k) as a Dense on the OpenCL
        executor ``exec``, without a copy: a view of the array's buffer, which the Dense then
        reads and writes.

        Use it for data that already lives on the device (a PyOpenCL simulation), so that a
        solve neither copies it to the host nor back. The view needs the array in ``exec``'s
        OpenCL context (else a ValueError names both devices), C-contiguous from its buffer's
        start and of a value type ginkpy computes in (``dtype``, default the array's); anything
        else is converted into a copy on ``exec`` (an offset, int or other value types; a strided
        view through the host, as pyopencl copies only contiguous arrays). Work pending on the array's own queue, where that is not ``exec``'s, is waited
        for first.

        Parameters
        ----------
        exec : OpenCLExecutor
            The executor whose context the array lives in.
        array : pyopencl.array.Array
            1-D (a vector) or 2-D (n x k, row-major).
        dtype : dtype, optional
            The value type (default: the array's; another one makes a converted copy).

        Examples
        --------
        >>> b_dev = pyopencl.array.to_device(exec.queue, b)      # data on the device
        >>> B = gk.matrix.Dense.from_pyopencl(exec, b_dev)      # n x 1, a view: no copy
        >>> solver.apply(B, X)
        """
        if array.ndim not in (1, 2):
            raise ValueError(f"Dense.from_pyopencl needs a 1-D or 2-D array, got {array.ndim}-D")
        values = exec.adopt(array)
        source = np.dtype(values.dtype)
        target = exec.check_dtype(value_dtype(source if dtype is None else dtype))
        check_convertible(value_dtype(source), target, "the array's values")
        if values.ndim == 1:
            values = values.reshape(values.shape[0], 1)
        if source in VALUE_TYPES:
            return cls(exec, values).astype(target)
        # (integers, booleans: converted through the host into a new array)
        return cls(exec, exec.from_host(exec.to_host(values).astype(target)))

    def to_pyopencl(self) -> Any:
        """The values as a ``pyopencl.array.Array`` of shape (n, k) in the executor's context,
        without a copy (the Dense's own array: writing one changes the other). For a Dense on an
        OpenCL executor; :meth:`to_numpy` gives a host copy on any.

        Examples
        --------
        >>> x = solver.apply(B, X).to_pyopencl()        # stays on the device
        >>> x.get()                                     # a NumPy copy when wanted
        """
        import sys
        cla = sys.modules.get("pyopencl.array")
        if cla is None or not isinstance(self.values, cla.Array):
            raise TypeError(f"to_pyopencl: this Dense lives on {self.executor!r}, whose arrays are not pyopencl "
                            f"arrays: use to_numpy(), or make it on an OpenCL executor")
        return self.values

    @classmethod
    def empty(cls, exec: Executor, shape: tuple[int, int], dtype: Any = np.float64) -> "Dense":
        """Uninitialized n x k matrix."""
        return cls(exec, exec.alloc(_shape2(shape), exec.check_dtype(dtype)))

    @classmethod
    def zeros(cls, exec: Executor, shape: tuple[int, int], dtype: Any = np.float64) -> "Dense":
        """n x k matrix of zeros."""
        return cls.full(exec, shape, 0.0, dtype)

    @classmethod
    def full(cls, exec: Executor, shape: tuple[int, int], value: float, dtype: Any = np.float64) -> "Dense":
        """n x k matrix with every entry ``value``."""
        x = cls.empty(exec, shape, dtype)
        x.fill(value)
        return x

    def empty_like(self, shape: tuple[int, int] | None = None) -> "Dense":
        """Uninitialized matrix of this one's executor and value type (and shape, unless given)."""
        return Dense(self.executor, self.executor.alloc(_shape2(self.shape if shape is None else shape), self.dtype))

    def to_numpy(self) -> np.ndarray:
        """The n x k contents as a numpy array on the host."""
        return self.executor.to_host(self.values)

    def clone(self, exec: Executor | None = None) -> "Dense":
        """A copy of this matrix, on ``exec`` if given."""
        exec = self.executor if exec is None else exec
        return Dense(exec, *exec.copy_arrays(self.executor, self.values))


    def copy_from(self, other: "Dense") -> "Dense":
        """Copy ``other``'s values (same shape, any executor) into this matrix."""
        if other.shape != self.shape:
            raise ValueError(f"copy_from: shape {other.shape} does not match {self.shape}")
        check_convertible(other.dtype, self.dtype, "copy_from: the source's values")
        if self.executor.same_memory(other.executor):
            self.executor.run("matrix.dense.copy", other.astype(self.dtype), self)
        else:
            self.values = self.executor.from_host(other.to_numpy().astype(self.dtype, copy=False))
        return self

    def astype(self, dtype: Any) -> "Dense":
        """This matrix in value type ``dtype`` (itself when it already is): real to real or
        complex, complex to complex; complex to real is refused."""
        if np.dtype(dtype) == self.dtype:
            return self
        dtype = self.executor.check_dtype(dtype)
        check_convertible(self.dtype, dtype, "astype: the matrix's values")
        out = Dense.empty(self.executor, self.shape, dtype)
        self.executor.run("matrix.dense.convert_precision", self, out)
        return out

    # -- BLAS-like operations, each one named kernel ---------------------------------------------
    def fill(self, value: float) -> "Dense":
        """Set every entry to ``value``."""
        self.executor.run("matrix.dense.fill", self, value)
        return self

    def scale(self, alpha: Any) -> "Dense":
        """x = alpha x; ``alpha`` is a number or a 1 x 1 or 1 x k Dense (one factor per column)."""
        self.executor.run("matrix.dense.scale", as_scalar(self.executor, alpha, self.dtype), self)
        return self

    def add_scaled(self, alpha: Any, b: "Dense") -> "Dense":
        """x = x + alpha b."""
        self.executor.run("matrix.dense.add_scaled", as_scalar(self.executor, alpha, self.dtype), b, self)
        return self

    def sub_scaled(self, alpha: Any, b: "Dense") -> "Dense":
        """x = x - alpha b."""
        self.executor.run("matrix.dense.sub_scaled", as_scalar(self.executor, alpha, self.dtype), b, self)
        return self

    def compute_dot(self, b: "Dense", result: "Dense | None" = None) -> "Dense":
        """Per-column dot products x[:, j]^T b[:, j] into a 1 x k Dense (no conjugate, as
        Ginkgo's compute_dot; :meth:`compute_conj_dot` is the inner product of complex vectors)."""
        result = self._dot_result(b, result, "compute_dot")
        self.executor.run("matrix.dense.compute_dot", self, b, result)
        return result

    def compute_conj_dot(self, b: "Dense", result: "Dense | None" = None) -> "Dense":
        """Per-column inner products x[:, j]^H b[:, j] (the first argument conjugated, as
        ``numpy.vdot`` and Ginkgo's compute_conj_dot) into a 1 x k Dense; compute_dot for real values."""
        result = self._dot_result(b, result, "compute_conj_dot")
        self.executor.run("matrix.dense.compute_conj_dot", self, b, result)
        return result

    def _dot_result(self, b: "Dense", result: "Dense | None", what: str) -> "Dense":
        if b.shape != self.shape:
            raise ValueError(f"{what}: shapes {self.shape} and {b.shape} differ")
        if b.dtype != self.dtype:
            raise TypeError(f"{what}: value types {self.dtype} and {b.dtype} differ")
        return Dense.empty(self.executor, (1, self.shape[1]), self.dtype) if result is None else result

    def compute_gram(self, b: "Dense", result: "Dense | None" = None) -> "Dense":
        """The block inner product self^H b (k x m for self n x k and b n x m, conjugating self
        for complex values): every pair of columns' dot product, as the Gram matrices of block
        eigensolvers (LOBPCG) need. Into ``result`` (k x m, reused) where given."""
        if b.shape[0] != self.shape[0] or b.dtype != self.dtype:
            raise ValueError(f"compute_gram: b is {b.shape[0]} x {b.shape[1]} {b.dtype}, but self is "
                             f"{self.shape[0]} x {self.shape[1]} {self.dtype}: they need the same rows and type")
        shape = (self.shape[1], b.shape[1])
        if result is None:
            result = Dense.empty(self.executor, shape, self.dtype)
        elif result.shape != shape or result.dtype != self.dtype:
            raise ValueError(f"compute_gram: result must be {shape[0]} x {shape[1]} {self.dtype}, not "
                             f"{result.shape[0]} x {result.shape[1]} {result.dtype}")
        self.executor.run("matrix.dense.compute_gram", self, b, result)
        return result

    def compute_norm2(self, result: "Dense | None" = None) -> "Dense":
        """Per-column Euclidean norms into a 1 x k Dense of the real type (float64 for complex128)."""
        real = real_dtype(self.dtype)
        result = Dense.empty(self.executor, (1, self.shape[1]), real) if result is None else result
        if result.dtype != real:
            raise TypeError(f"compute_norm2: the result must have the real type {real} of {self.dtype}, "
                            f"not {result.dtype}")
        self.executor.run("matrix.dense.compute_norm2", self, result)
        return result

    def transpose(self) -> "Dense":
        """A new k x n matrix holding the transpose."""
        out = Dense.empty(self.executor, (self.shape[1], self.shape[0]), self.dtype)
        self.executor.run("matrix.dense.transpose", self, out)
        return out

    def conj_transpose(self) -> "Dense":
        """A new k x n matrix holding the conjugate transpose (the transpose for real values)."""
        out = Dense.empty(self.executor, (self.shape[1], self.shape[0]), self.dtype)
        self.executor.run("matrix.dense.conj_transpose", self, out)
        return out

    def permute(self, permutation: Any, mode: str = "symmetric", column_permutation: Any = None) -> "Dense":
        """The permuted matrix P A P^T (or P A, A P^T, P A Q^T, ...: ``mode`` as in Ginkgo's
        permute_mode), a new Dense on this executor: see :func:`ginkpy.matrix.permute`."""
        return permute(self, permutation, mode, column_permutation)

    def _permuted(self, rows: Permutation | None, cols: Permutation | None) -> "Dense":
        """A[rows[i], cols[j]] as a new Dense (None: that side as it is); see :func:`permute`."""
        out = self.empty_like()
        self.executor.run("matrix.dense.permute", self, None if rows is None else rows.perm,
                          None if cols is None else cols.perm, out)
        return out

    def is_finite(self) -> bool:
        """True when no entry is NaN or infinite."""
        return bool(self.executor.run("matrix.dense.is_finite", self))

    # -- LinOp: dense matrix product ---------------------------------------------------------
    def _apply_impl(self, b: "Dense", x: "Dense") -> None:
        self.executor.run("matrix.dense.simple_apply", self, b, x)

    def _apply_advanced_impl(self, alpha: "Dense", b: "Dense", beta: "Dense", x: "Dense") -> None:
        self.executor.run("matrix.dense.apply", alpha, self, b, beta, x)

    def __getitem__(self, key):  # pragma: no cover - convenience for interactive use
        return self.to_numpy()[key]


def overwrite(exec: Executor, target: Any, source: Any) -> None:
    """target = source for two arrays of ``exec`` of one size and value type, in place (one
    copy on the executor): how a values update refreshes what a solve reads, so that the
    launches recorded with ``target`` stay valid."""
    Dense(exec, target.reshape(-1, 1)).copy_from(Dense(exec, source.reshape(-1, 1)))


def as_scalar(exec: Executor, value: Any, dtype: Any) -> Dense:
    """``value`` as a 1 x 1 (or 1 x k) Dense on ``exec``: numbers and numpy arrays are copied there."""
    if isinstance(value, Dense):
        if value.shape[0] != 1:
            raise ValueError(f"a scalar must be a 1 x 1 or 1 x k Dense, got {value.shape}")
        return value.to_executor(exec).astype(dtype)
    check_convertible(np.asarray(value).dtype, dtype, "the scalar")
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim > 1 or not np.all(np.isfinite(arr)):
        raise ValueError(f"a scalar must be a finite number or a 1-D array of per-column numbers, got {value!r}")
    if arr.ndim == 0:
        # a number: one constant per executor and value (solver loops apply with -1 and 1 often)
        constants = exec.__dict__.setdefault("_constants", {})
        key = (arr.dtype, arr.item())
        if key not in constants:
            constants[key] = Dense(exec, exec.from_host(arr.reshape(1, 1)))
        return constants[key]
    return Dense(exec, exec.from_host(arr.reshape(1, -1)))


# the vector type of applies, for the operators of base (core/base/lin_op.py's register_dense)
register_dense(Dense.zeros, as_scalar)


def _shape2(shape: Any) -> tuple[int, int]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape), 1)
    if len(shape) != 2 or min(shape) < 0:
        raise ValueError(f"a Dense shape is (rows, columns) with both >= 0, got {shape}")
    return int(shape[0]), int(shape[1])
