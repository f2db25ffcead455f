"""sigpu.flac against the reference codec: files made by the `flac` encoder from known PCM,
decoded by sigpu and compared with that PCM (and with `flac -d` where the encoder's own decoder
is the oracle)."""

import gc
import pathlib

import numpy as np
import pytest

import sigpu
import sigpu.flac

from conftest import decode_with_flac_cli


def as_np(a):
    return np.asarray(a)


def test_info(make_flac):
    path, pcm = make_flac(samples=30000, channels=2, bits=16, rate=48000)
    info = sigpu.flac.info(path)
    assert (info.sample_rate, info.channels, info.bits_per_sample) == (48000, 2, 16)
    assert info.total_samples == 30000
    assert info.duration == pytest.approx(30000 / 48000)
    assert len(info.md5) == 32
    assert "reference libFLAC" in info.vendor


@pytest.mark.parametrize("channels", [1, 2, 6])
def test_decode_int16_matches_source(make_flac, channels):
    path, pcm = make_flac(samples=50000, channels=channels, bits=16)
    a = sigpu.flac.decode(path, device="cpu", dtype="int16")
    assert isinstance(a, sigpu.Array)
    assert a.shape == (50000, channels) and a.dtype == "int16" and a.device == "cpu"
    assert (a.sample_rate, a.channels, a.bits_per_sample, a.samples) == (44100, channels, 16, 50000)
    np.testing.assert_array_equal(as_np(a), pcm)
    assert a.report.ok and a.report.md5 == "match" and a.report.frames > 0


def test_dtypes_and_layout(make_flac):
    path, pcm = make_flac()
    i32 = as_np(sigpu.flac.decode(path, device="cpu", dtype="int32"))
    np.testing.assert_array_equal(i32, pcm.astype(np.int64) << 16)
    f32 = as_np(sigpu.flac.decode(path, device="cpu", dtype="float32"))
    assert f32.dtype == np.float32
    np.testing.assert_array_equal(f32, (pcm / 32768).astype(np.float32))
    planar = sigpu.flac.decode(path, device="cpu", dtype="int16", channels_first=True)
    assert planar.shape == (2, 44100)
    np.testing.assert_array_equal(as_np(planar), pcm.T)


def test_24_bit_against_flac_d(make_flac):
    path, _ = make_flac(samples=20000, channels=2, bits=24, rate=96000)
    oracle = decode_with_flac_cli(path, 2, 24)
    a = sigpu.flac.decode(path, device="cpu", dtype="int32")
    np.testing.assert_array_equal(as_np(a), oracle.astype(np.int64) << 8)
    assert a.report.md5 == "match"


def test_inputs(make_flac):
    path, pcm = make_flac(samples=10000)
    data = pathlib.Path(path).read_bytes()
    sources = [str(path), pathlib.Path(path), data, bytearray(data), memoryview(data),
               np.frombuffer(data, np.uint8)]
    for src in sources:
        np.testing.assert_array_equal(as_np(sigpu.flac.decode(src, device="cpu", dtype="int16")),
                                      pcm, err_msg=type(src).__name__)


def test_range(make_flac):
    path, pcm = make_flac(samples=100000, channels=2)
    a = sigpu.flac.decode(path, device="cpu", dtype="int16", start=12345, stop=54321)
    np.testing.assert_array_equal(as_np(a), pcm[12345:54321])
    tail = sigpu.flac.decode(path, device="cpu", dtype="int16", start=-1000)
    np.testing.assert_array_equal(as_np(tail), pcm[-1000:])
    assert sigpu.flac.decode(path, device="cpu", start=99999, stop=5).shape == (0, 2)


def test_numpy_view_is_zero_copy_and_outlives_the_result(make_flac):
    path, pcm = make_flac()
    a = sigpu.flac.decode(path, device="cpu", dtype="int16")
    ptr = a.__array_interface__["data"][0]
    view = np.asarray(a)
    assert view.__array_interface__["data"][0] == ptr
    del a
    gc.collect()
    np.testing.assert_array_equal(view, pcm)


def test_dlpack_roundtrip(make_flac):
    path, pcm = make_flac()
    a = sigpu.flac.decode(path, device="cpu", dtype="float32")
    assert a.__dlpack_device__() == (1, 0)
    ptr = a.__array_interface__["data"][0]
    x = np.from_dlpack(a)
    assert x.__array_interface__["data"][0] == ptr
    del a
    gc.collect()
    np.testing.assert_array_equal(x, (pcm / 32768).astype(np.float32))
    # An unconsumed capsule frees what it holds.
    b = sigpu.flac.decode(path, device="cpu")
    capsule = b.__dlpack__()
    del capsule, b
    gc.collect()


def test_host_array_has_no_cuda_interface(make_flac):
    a = sigpu.flac.decode(make_flac()[0], device="cpu")
    assert not hasattr(a, "__cuda_array_interface__")
    assert a.cpu() is not None and a.numpy().shape == a.shape


def test_decode_batch(make_flac):
    files = [make_flac(samples=5000 + 1000 * i, channels=1 + i % 2, seed=i) for i in range(5)]
    out = sigpu.flac.decode_batch([p for p, _ in files], device="cpu", dtype="int16")
    assert len(out) == 5
    for a, (_, pcm) in zip(out, files):
        np.testing.assert_array_equal(as_np(a), pcm)


def test_damage_is_reported(make_flac):
    path, pcm = make_flac(samples=200000)
    data = bytearray(pathlib.Path(path).read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    a = sigpu.flac.decode(bytes(data), device="cpu", dtype="int16")
    assert not a.report.ok and a.report.damage
    d = a.report.damage[0]
    assert d.samples > 0 and d.message
    good = np.ones(len(pcm), bool)
    for d in a.report.damage:
        good[d.first_sample:d.first_sample + d.samples] = False
        assert not as_np(a)[d.first_sample:d.first_sample + d.samples].any()
    np.testing.assert_array_equal(as_np(a)[good], pcm[good])
    with pytest.raises(sigpu.Error):
        sigpu.flac.decode(bytes(data), device="cpu", strict=True)


def test_errors(tmp_path):
    missing = tmp_path / "missing.flac"
    with pytest.raises(sigpu.InputError, match="missing.flac"):
        sigpu.flac.decode(missing, device="cpu")
    with pytest.raises(sigpu.InputError):
        sigpu.flac.decode(b"this is not a FLAC file at all" * 10, device="cpu")
    with pytest.raises(sigpu.UsageError, match="dtype"):
        sigpu.flac.decode(b"fLaC", dtype="int8")
    with pytest.raises(ValueError):
        sigpu.flac.decode(b"fLaC", device="tpu")
    with pytest.raises(sigpu.UsageError):
        sigpu.flac.decode(12, device="cpu")
    assert issubclass(sigpu.InputError, sigpu.Error)
    assert issubclass(sigpu.UsageError, ValueError)


def test_threads_decode_concurrently(make_flac):
    from concurrent.futures import ThreadPoolExecutor

    path, pcm = make_flac(samples=300000)
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda _: sigpu.flac.decode(path, device="cpu", dtype="int16"),
                             range(8)))
    for a in outs:
        np.testing.assert_array_equal(as_np(a), pcm)


# ---- GPU ---------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_decode_matches_cpu(make_flac):
    path, pcm = make_flac(samples=300000, channels=2)
    a = sigpu.flac.decode(path, device="cuda", dtype="int16")
    assert a.device == "cuda:0" and a.report.backend == "cuda"
    assert not hasattr(a, "__array_interface__")
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (300000, 2) and cai["typestr"] == "<i2"
    assert a.__dlpack_device__() == (2, 0)
    np.testing.assert_array_equal(a.numpy(), pcm)
    assert a.report.md5 == "match"


@pytest.mark.gpu
def test_gpu_range_and_batch(make_flac):
    path, pcm = make_flac(samples=100000)
    a = sigpu.flac.decode(path, device="cuda", dtype="int16", start=1000, stop=60000)
    assert a.device == "cuda:0"
    np.testing.assert_array_equal(a.numpy(), pcm[1000:60000])
    files = [make_flac(samples=7000 + i, seed=i) for i in range(4)]
    for b, (_, p) in zip(sigpu.flac.decode_batch([f for f, _ in files], device="cuda",
                                                 dtype="int16"), files):
        assert b.device == "cuda:0"
        np.testing.assert_array_equal(b.numpy(), p)


@pytest.mark.gpu
def test_gpu_torch_zero_copy_and_lifetime(make_flac):
    torch = pytest.importorskip("torch")
    path, pcm = make_flac(samples=200000)
    a = sigpu.flac.decode(path, device="cuda", dtype="float32")
    ptr = a.__cuda_array_interface__["data"][0]
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t = torch.from_dlpack(a)
    assert t.is_cuda and t.data_ptr() == ptr
    del a
    gc.collect()
    np.testing.assert_array_equal(t.cpu().numpy(), (pcm / 32768).astype(np.float32))


@pytest.mark.gpu
def test_gpu_cupy_and_gpu_input(make_flac):
    cupy = pytest.importorskip("cupy")
    path, pcm = make_flac(samples=150000)
    a = sigpu.flac.decode(path, device="cuda", dtype="int16")
    c = cupy.asarray(a)
    assert c.data.ptr == a.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(cupy.asnumpy(c), pcm)
    # The compressed bytes already on the GPU are decoded there.
    d_file = cupy.asarray(np.frombuffer(pathlib.Path(path).read_bytes(), np.uint8))
    b = sigpu.flac.decode(d_file, device="cuda", dtype="int16")
    np.testing.assert_array_equal(b.numpy(), pcm)
