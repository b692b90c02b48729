"""A GPU's copies of host arrays through page-locked staging chunks (``exec.from_host_async``,
``opencl/staging.py: copy_staged``) and its reads back through them (``exec.to_host``,
``read_staged``), run on any device by forcing the choices: a small ``staged_upload_bytes`` and
``staged_download_bytes`` and small chunks, so that every array spans several chunks and the
ring of slots wraps around; compared bit for bit with the host arrays."""
import dataclasses
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import ginkpy as gk
from conftest import taken_for
from ginkpy.opencl import staging

CHUNK = 1000  # bytes: not a multiple of any item size, so chunks split values


@pytest.fixture(params=[1, 3], ids=["one-thread", "three-threads"])
def staged(ocl, monkeypatch, request):
    """An executor taking itself for a GPU whose arrays of >= 64 bytes go up staged in chunks of
    CHUNK bytes, each chunk's memcpy by one host thread or split over three (in pieces of 8
    bytes' multiples: several to a chunk), and come back staged (a read of one such array)."""
    exe = taken_for(ocl, "gpu")
    choices = dataclasses.replace(exe.device_choices(), staged_upload_bytes=64, staged_download_bytes=64)
    monkeypatch.setattr(exe, "device_choices", lambda: choices)
    monkeypatch.setattr(staging, "PIPELINE_BYTES", CHUNK)
    monkeypatch.setattr(staging, "staging_threads", lambda info: request.param)
    monkeypatch.setattr(staging, "PARALLEL_COPY_BYTES", 1)
    monkeypatch.setattr(staging, "_PIECE_ALIGN", 8)
    return exe


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_copy_into_by_several_threads(monkeypatch, rng, threads):
    monkeypatch.setattr(staging, "PARALLEL_COPY_BYTES", 1)
    monkeypatch.setattr(staging, "_PIECE_ALIGN", 8)
    for n in (1, 7, 8, 9, 1000, 4099, 65537):  # fewer bytes than pieces, a page's worth and more
        src = rng.integers(0, 256, n).astype(np.uint8)
        dst = np.zeros(n, np.uint8)
        staging.copy_into(dst, src, threads)
        assert dst.tobytes() == src.tobytes()


def test_from_host_async_copies_bit_for_bit(staged, rng):
    hosts = [rng.standard_normal(1234), np.arange(77, dtype=np.int32), np.zeros(0),
             (rng.standard_normal((301, 3)) + 1j * rng.standard_normal((301, 3))).astype(np.complex64),
             np.array([1.5, -2.0]), rng.integers(0, 9, 10000).astype(np.int32)]
    kept = [h.copy() for h in hosts]
    outs, events = staged.from_host_async(hosts)
    assert len(events) <= 2  # the staged copies' last event, the small direct copy's
    for h in hosts:
        h[...] = 0  # staged arrays are free on return; the small one is held by its event ...
    for event in events:
        event.wait()
    for out, want in zip(outs, kept):
        got = staged.to_host(out)
        if want.nbytes >= 64:
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()


def test_from_host_copies_large_and_small(staged, rng):
    for n in (3, 8, 125, 126, 5000, 100000):  # below, at and above a chunk, SMALL_WRITE
        data = rng.standard_normal(n)
        want = data.copy()
        out = staged.from_host(data)
        data[...] = np.nan  # from_host's copy is the caller's no longer, waited for or not
        assert staged.to_host(out).tobytes() == want.tobytes()


def test_csr_from_scipy_through_the_staging_chunks(staged, ocl):
    S = sp.random(700, 700, density=0.02, format="csr", random_state=3) + sp.eye(700)
    A = gk.matrix.Csr.from_scipy(staged, S)
    B = gk.matrix.Csr.from_scipy(ocl, S)  # the device's own path
    for a, b, h in ((A.row_ptrs, B.row_ptrs, S.indptr), (A.col_idxs, B.col_idxs, S.indices),
                    (A.values, B.values, S.data)):
        assert staged.to_host(a).tobytes() == ocl.to_host(b).tobytes() == h.astype(ocl.to_host(b).dtype).tobytes()


def test_reads_come_back_through_the_ring_bit_for_bit(staged, ocl, rng):
    # several arrays in one read (more chunks than the ring has slots, values split across
    # chunks, an empty one, a view at an offset, a small one beside), bit for bit
    hosts = [rng.standard_normal(1234), (rng.standard_normal(301) + 1j * rng.standard_normal(301)).astype(np.complex64),
             np.zeros(0), np.arange(7, dtype=np.int32), rng.integers(0, 9, 10000).astype(np.int32)]
    arrays = [ocl.from_host(h) if h.size else ocl.alloc((0,), h.dtype) for h in hosts]
    arrays.append(arrays[0][5:1005])  # an offset into its buffer
    assert staging.reads_staged(staged, arrays) and not staging.reads_staged(ocl, arrays)
    got = staged.to_host(*arrays)
    for g, want in zip(got, [*hosts, hosts[0][5:1005]]):
        assert g.dtype == want.dtype and g.shape == want.shape and g.tobytes() == want.tobytes()
    assert staged.to_host(arrays[4]).tobytes() == hosts[4].tobytes()  # one array: not a tuple


def test_a_read_compared_chunk_by_chunk_finds_every_change(staged, ocl, rng):
    # to_host_compared through the ring (chunks of 1000 bytes, values split across them): the
    # same bits; one flipped bit in any chunk (first, middle, last byte) of any array; a NaN equal
    # to itself, -0.0 not to 0.0; another shape or type; an empty array
    values = rng.standard_normal(1234)
    values[[3, 500]] = np.nan, -0.0
    hosts = [values, rng.integers(0, 9, 2345).astype(np.int32), np.zeros(0)]
    arrays = [ocl.from_host(h) if h.size else ocl.alloc((0,), h.dtype) for h in hosts]
    assert staging.reads_staged(staged, arrays)
    for exe in (staged, ocl):  # (the ring's comparison and the plain read's)
        copies, same = exe.to_host_compared(arrays, [h.copy() for h in hosts])
        assert same == [True] * 3 and all(c.tobytes() == h.tobytes() for c, h in zip(copies, hosts))
        for k in (0, 1):
            for byte in (0, 999, 1000, hosts[k].nbytes - 1):
                changed = [h.copy() for h in hosts]
                changed[k].view(np.uint8)[byte] ^= 1
                copies, same = exe.to_host_compared(arrays, changed)
                assert same == [k != 0, k != 1, True], (exe, k, byte)
                assert all(c.tobytes() == h.tobytes() for c, h in zip(copies, hosts))  # (the device's)
        zero = hosts[0].copy()
        zero[500] = 0.0
        others = [zero, hosts[1][:-1], hosts[2].astype(np.float32)]
        assert exe.to_host_compared(arrays, others)[1] == [False] * 3
        assert exe.to_host_compared(arrays[1:2], [hosts[1].astype(np.int64)])[1] == [False]


def test_a_new_chunk_size_drains_the_ring(staged, monkeypatch, rng):
    data = rng.standard_normal(10000)  # above SMALL_WRITE: staged
    first = staged.from_host(data)
    ring = staged._device.ring
    assert ring.chunk_bytes == CHUNK and len(ring.arrays) == staging.RING_SLOTS
    monkeypatch.setattr(staging, "PIPELINE_BYTES", 2 * CHUNK)
    second = staged.from_host(data)
    assert staged._device.ring.chunk_bytes == 2 * CHUNK
    assert staged.to_host(first).tobytes() == staged.to_host(second).tobytes() == data.tobytes()


def test_staged_copies_from_many_threads(staged):
    """16 threads upload arrays of their own through the one ring at once and read each back
    through it; each arrives whole, both ways."""
    errors, results = [], {}

    def upload(k: int) -> None:
        try:
            for r in range(4):
                data = np.arange(500 + 37 * k + r, dtype=np.float64) * (k + 1) + r
                (out,), events = staged.from_host_async([data])
                results[k, r] = (data.copy(), out)
                data[...] = -1
                if staged.to_host(out).tobytes() != results[k, r][0].tobytes():
                    errors.append(f"thread {k}, array {r} read back otherwise")
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)
    threads = [threading.Thread(target=upload, args=(k,)) for k in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 64
    for want, out in results.values():
        assert staged.to_host(out).tobytes() == want.tobytes()


def test_reference_from_host_async_copies(ref, rng):
    hosts = [rng.standard_normal(10), np.arange(4, dtype=np.int32)]
    outs, events = ref.from_host_async(hosts)
    assert events == []
    hosts[0][...] = 0
    assert outs[0].any() and (outs[1] == np.arange(4)).all()
