"""Matrix Market I/O: every header variant against hand-written matrices, round trips, errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import matrix_path

HEADER = "%%MatrixMarket matrix"

# (header qualifiers, body after the header, the matrix it holds)
VARIANTS = {
    "coordinate real general": ("3 2 3\n1 1 1.5\n3 1 -2\n2 2 4e-3\n",
                                [[1.5, 0], [0, 4e-3], [-2, 0]]),
    "coordinate real symmetric": ("% lower triangle\n3 3 4\n1 1 2\n2 1 -1\n3 2 5\n3 3 1\n",
                                  [[2, -1, 0], [-1, 0, 5], [0, 5, 1]]),
    "coordinate real skew-symmetric": ("3 3 2\n2 1 -1\n3 2 5\n",
                                       [[0, 1, 0], [-1, 0, -5], [0, 5, 0]]),
    "coordinate pattern general": ("3 3 3\n1 1\n2 1\n3 3\n",
                                   [[1, 0, 0], [1, 0, 0], [0, 0, 1]]),
    "coordinate pattern symmetric": ("3 3 2\n2 1\n3 3\n",
                                     [[0, 1, 0], [1, 0, 0], [0, 0, 1]]),
    "coordinate integer general": ("2 2 2\n1 2 7\n2 1 -3\n", [[0, 7], [-3, 0]]),
    "coordinate integer symmetric": ("2 2 2\n1 1 4\n2 1 -3\n", [[4, -3], [-3, 0]]),
    "coordinate integer skew-symmetric": ("2 2 1\n2 1 3\n", [[0, -3], [3, 0]]),
    "array real general": ("% column-major\n2 3\n1\n2\n3\n4\n5\n6.5\n", [[1, 3, 5], [2, 4, 6.5]]),
    "array real symmetric": ("3 3\n1\n2\n3\n4\n5\n6\n", [[1, 2, 3], [2, 4, 5], [3, 5, 6]]),
    "array real skew-symmetric": ("3 3\n2\n3\n5\n", [[0, -2, -3], [2, 0, -5], [3, 5, 0]]),
    "array integer general": ("2 2\n1\n-2\n3\n4\n", [[1, 3], [-2, 4]]),
    "array integer symmetric": ("2 2\n1\n-2\n4\n", [[1, -2], [-2, 4]]),
}


def _file(tmp_path, text, name="m.mtx"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_header_variant(exec, tmp_path, variant):
    body, expected = VARIANTS[variant]
    path = _file(tmp_path, f"{HEADER} {variant}\n{body}")
    A = gk.read(path, exec)
    assert isinstance(A, gk.matrix.Csr) and A.executor is exec
    assert A.dtype == np.float64 and exec.to_host(A.col_idxs).dtype == np.int32
    np.testing.assert_array_equal(A.to_scipy().toarray(), expected)
    D = gk.read(path, exec, format="dense")
    assert isinstance(D, gk.matrix.Dense)
    np.testing.assert_array_equal(D.to_numpy(), expected)


def test_header_is_case_insensitive_after_the_banner(ref, tmp_path):
    path = _file(tmp_path, "%%MatrixMarket MATRIX Coordinate Real Symmetric\n2 2 1\n2 1 3\n")
    np.testing.assert_array_equal(gk.read(path, ref).to_scipy().toarray(), [[0, 3], [3, 0]])


def test_dtype_and_dense_class(exec, tmp_path):
    path = _file(tmp_path, f"{HEADER} array real general\n3 1\n0.1\n-2\n3\n")  # a right-hand side
    b = gk.read(path, exec, format=gk.matrix.Dense, dtype=np.float32)
    assert b.shape == (3, 1) and b.dtype == np.float32
    np.testing.assert_array_equal(b.to_numpy()[:, 0], np.array([0.1, -2, 3], dtype=np.float32))
    A = gk.read(str(path), exec, format="CSR", dtype=np.float32)
    assert A.dtype == np.float32 and A.nnz == 3


def _formats():
    """Csr, Dense and every class of gk.matrix that converts from Csr."""
    return [gk.matrix.Csr, gk.matrix.Dense] + [cls for cls in (getattr(gk.matrix, name) for name in gk.matrix.__all__)
                                               if hasattr(cls, "from_csr")]


def _to_array(A):
    if isinstance(A, gk.matrix.Dense):
        return A.to_numpy()
    return (A if isinstance(A, gk.matrix.Csr) else A.to_csr()).to_scipy().toarray()


def test_every_format_of_gk_matrix(ref, tmp_path):
    path = _file(tmp_path, f"{HEADER} coordinate real general\n4 4 5\n1 1 1\n2 3 2\n3 3 3\n4 1 4\n4 4 5\n")
    expected = [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 3, 0], [4, 0, 0, 5]]
    for cls in _formats():
        for format in (cls, cls.__name__.lower()):
            A = gk.read(path, ref, format=format)
            assert type(A) is cls
            np.testing.assert_array_equal(_to_array(A), expected)


def test_round_trip_csr(exec, rng, tmp_path):
    S = sp.random(37, 23, density=0.2, random_state=rng, format="csr")
    S.data[:2] = 0.0  # explicit zeros are stored entries and come back
    S.data[2] = 1.0 / 3.0
    A = gk.matrix.Csr.from_scipy(exec, S)
    path = tmp_path / "roundtrip"  # no .mtx: the name is kept as given
    gk.write(path, A)
    assert path.read_text().startswith(f"{HEADER} coordinate real general")
    B = gk.read(path, exec).to_scipy()
    assert B.nnz == S.nnz
    np.testing.assert_array_equal(B.indptr, S.indptr)
    np.testing.assert_array_equal(B.indices, S.indices)
    np.testing.assert_array_equal(B.data, S.data)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_trip_dense(exec, rng, tmp_path, dtype):
    values = rng.standard_normal((5, 3)).astype(dtype)
    values[0, 0] = 0.0
    path = tmp_path / "d.mtx"
    gk.write(path, gk.matrix.Dense.from_numpy(exec, values))
    assert path.read_text().startswith(f"{HEADER} array real general")
    back = gk.read(path, exec, format="dense", dtype=dtype).to_numpy()
    np.testing.assert_array_equal(back, values)


def test_write_any_format_with_to_csr(ref, rng, tmp_path):
    S = sp.random(9, 9, density=0.3, random_state=rng, format="csr") + sp.eye(9)
    csr = gk.matrix.Csr.from_scipy(ref, S)
    for cls in _formats():
        op = {gk.matrix.Csr: csr, gk.matrix.Dense: csr.to_dense()}.get(cls) or cls.from_csr(csr)
        path = tmp_path / f"{cls.__name__}.mtx"
        gk.write(path, op)
        np.testing.assert_array_equal(gk.read(path, ref).to_scipy().toarray(), S.toarray())


# (header qualifiers, body after the header, the complex matrix it holds)
COMPLEX_VARIANTS = {
    "coordinate complex general": ("2 3 3\n1 1 1.5 -2\n2 3 0 1e-3\n1 3 -4 0\n",
                                   [[1.5 - 2j, 0, -4], [0, 0, 1e-3j]]),
    "coordinate complex symmetric": ("2 2 2\n1 1 1 1\n2 1 2 -3\n", [[1 + 1j, 2 - 3j], [2 - 3j, 0]]),
    "coordinate complex hermitian": ("3 3 3\n1 1 4 0\n2 1 1 2\n3 2 0 -1\n",
                                     [[4, 1 - 2j, 0], [1 + 2j, 0, 1j], [0, -1j, 0]]),
    "coordinate complex skew-symmetric": ("2 2 1\n2 1 1 1\n", [[0, -1 - 1j], [1 + 1j, 0]]),
    "array complex general": ("2 2\n1 1\n2 0\n3 -1\n4 0.5\n", [[1 + 1j, 3 - 1j], [2, 4 + 0.5j]]),
    "array complex hermitian": ("2 2\n1 0\n2 3\n5 0\n", [[1, 2 - 3j], [2 + 3j, 5]]),
}


@pytest.mark.parametrize("variant", COMPLEX_VARIANTS)
def test_complex_files(exec, tmp_path, variant):
    """Complex files read as complex128 (complex64 when asked), hermitian storage expanded with
    the conjugate; written back as complex general files with every digit."""
    body, expected = COMPLEX_VARIANTS[variant]
    path = _file(tmp_path, f"{HEADER} {variant}\n{body}")
    A = gk.read(path, exec)
    assert isinstance(A, gk.matrix.Csr) and A.dtype == np.complex128
    np.testing.assert_array_equal(A.to_scipy().toarray(), expected)
    np.testing.assert_array_equal(gk.read(path, exec, format="dense").to_numpy(), expected)
    single = gk.read(path, exec, dtype=np.complex64)
    assert single.dtype == np.complex64
    np.testing.assert_array_equal(single.to_scipy().toarray(), np.asarray(expected, np.complex64))
    out = tmp_path / "out.mtx"
    gk.write(out, A)
    assert out.read_text().startswith(f"{HEADER} coordinate complex general")
    np.testing.assert_array_equal(gk.read(out, exec).to_scipy().toarray(), expected)


def test_complex_round_trip_keeps_every_digit(ref, tmp_path, rng):
    """A random complex matrix (every format) and a complex Dense written and read back exactly."""
    S = sp.random(13, 9, density=0.3, random_state=3, format="csr")
    S = (S + 1j * sp.random(13, 9, density=0.3, random_state=4, format="csr")).tocsr() * np.pi
    for cls in (gk.matrix.Csr, gk.matrix.Coo, gk.matrix.Ell, gk.matrix.Sellp, gk.matrix.Hybrid):
        op = cls.from_scipy(ref, S)
        path = tmp_path / f"{cls.__name__}.mtx"
        gk.write(path, op)
        np.testing.assert_array_equal(gk.read(path, ref).to_scipy().toarray(), S.toarray())
    D = rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))
    gk.write(tmp_path / "d.mtx", gk.matrix.Dense.from_numpy(ref, D))
    np.testing.assert_array_equal(gk.read(tmp_path / "d.mtx", ref, format="dense").to_numpy(), D)


def test_real_matrix(ref):
    A = gk.read(matrix_path("nos6.mtx"), ref)  # stored as the lower triangle of a symmetric matrix
    S = A.to_scipy()
    assert A.shape == (675, 675) and A.nnz == 3255
    assert abs(S - S.T).max() == 0


@pytest.mark.parametrize("text, error, message", [
    ("", ValueError, "not a Matrix Market file"),
    ("3 3 1\n1 1 1\n", ValueError, "not a Matrix Market file: its first line must be"),
    ("%%MatrixMarket matrix coordinate real\n", ValueError, "first line must be"),
    (f"{HEADER} coordinate real hermitian\n1 1 1\n1 1 1\n", ValueError, "'hermitian' needs the field 'complex'"),
    ("%%MatrixMarket vector coordinate real general\n3 1\n1 1\n", ValueError, "'vector', not a 'matrix'"),
    (f"{HEADER} sparse real general\n1 1 1\n1 1 1\n", ValueError, "unknown Matrix Market format 'sparse'"),
    (f"{HEADER} coordinate float general\n1 1 1\n1 1 1\n", ValueError, "unknown Matrix Market field 'float'"),
    (f"{HEADER} coordinate real lower\n1 1 1\n1 1 1\n", ValueError, "unknown Matrix Market symmetry 'lower'"),
    (f"{HEADER} array pattern general\n1 1\n", ValueError, "cannot have the field 'pattern'"),
    (f"{HEADER} coordinate real general\n3 3 3\n1 1 1\n3 2 5\n", ValueError, "not a valid.*Truncated"),
    (f"{HEADER} coordinate real general\n3 3 1\n4 1 1\n", ValueError, "not a valid.*out of bounds"),
    (f"{HEADER} coordinate real general\n3 3 1\n1 1 abc\n", ValueError, "not a valid.*Invalid"),
    (f"{HEADER} coordinate real general\n2 2 1\n1 1 3\n2 2 4\n", ValueError, "not a valid.*too long"),
])
def test_bad_files(ref, tmp_path, text, error, message):
    with pytest.raises(error, match=message):
        gk.read(_file(tmp_path, text), ref)


def test_bad_arguments(ref, tmp_path):
    with pytest.raises(FileNotFoundError, match="Matrix Market file not found: .*missing.mtx"):
        gk.read(tmp_path / "missing.mtx", ref)
    path = _file(tmp_path, f"{HEADER} coordinate real general\n1 1 1\n1 1 1\n")
    with pytest.raises(ValueError, match="unknown matrix format 'bsr'.*'csr'"):
        gk.read(path, ref, format="bsr")
    with pytest.raises(ValueError, match="unknown matrix format"):
        gk.read(path, ref, format=dict)
    with pytest.raises(TypeError, match="exec must be an executor"):
        gk.read(path, "reference")
    with pytest.raises(TypeError, match="float32, float64, complex64 or complex128"):
        gk.read(path, ref, dtype=np.int32)
    complex_path = _file(tmp_path, f"{HEADER} coordinate complex general\n1 1 1\n1 1 1 2\n", "c.mtx")
    with pytest.raises(TypeError, match="holds a complex matrix, but dtype=float64 is real"):
        gk.read(complex_path, ref, dtype=np.float64)
    with pytest.raises(TypeError, match="write needs a ginkpy matrix"):
        gk.write(tmp_path / "x.mtx", np.eye(2))
