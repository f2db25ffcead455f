"""sigpu.prores and sigpu.hevc from Python, against FFmpeg's decoders: streams made with ffmpeg
(prores_ks) and x265, decoded by sigpu and by the `ffmpeg` CLI to raw planes."""

import shutil
import subprocess

import numpy as np
import pytest

import sigpu


def need(tool):
    path = shutil.which(tool)
    if not path:
        pytest.skip(f"{tool} is not installed")
    return path


def ffmpeg_planes(path, pix_fmt, width, height, planes, dtype):
    """FFmpeg's decode of every frame, as a list of [plane arrays]."""
    raw = subprocess.run([need("ffmpeg"), "-v", "error", "-i", str(path), "-f", "rawvideo",
                          "-pix_fmt", pix_fmt, "-"], check=True, capture_output=True).stdout
    data = np.frombuffer(raw, dtype)
    frames, i = [], 0
    while i < len(data):
        frame = []
        for w, h in planes:
            frame.append(data[i:i + w * h].reshape(h, w))
            i += w * h
        frames.append(frame)
    return frames


@pytest.fixture(scope="module")
def prores_clip(tmp_path_factory):
    out = tmp_path_factory.mktemp("prores") / "clip.mov"
    subprocess.run([need("ffmpeg"), "-v", "error", "-f", "lavfi", "-i",
                    "testsrc2=size=160x96:rate=25", "-frames:v", "5", "-c:v", "prores_ks",
                    "-profile:v", "3", "-pix_fmt", "yuv422p10le", str(out)], check=True)
    return out


def test_prores_matches_ffmpeg(prores_clip):
    prores = pytest.importorskip("sigpu.prores")
    frames = prores.decode(prores_clip, device="cpu", batch=2)
    assert len(frames) == 5 and (frames.width, frames.height) == (160, 96)
    oracle = ffmpeg_planes(prores_clip, "yuv422p10le", 160, 96,
                           [(160, 96), (80, 96), (80, 96)], "<u2")
    got = list(frames)
    assert [f.index for f in got] == list(range(5)) and not frames.damage
    for f, ref in zip(got, oracle):
        assert f.format == "yuv422p10le" and f.scan == "progressive"
        assert [p.shape for p in f.planes] == [(96, 160), (96, 80), (96, 80)]
        for p, r in zip(f.planes, ref):
            np.testing.assert_array_equal(np.asarray(p), r)
    # A plane outlives its frame and the iterator.
    y = np.asarray(got[0].planes[0])
    del got, frames
    np.testing.assert_array_equal(y, oracle[0][0])


def test_prores_errors(tmp_path):
    prores = pytest.importorskip("sigpu.prores")
    with pytest.raises(sigpu.InputError):
        prores.decode(tmp_path / "missing.mov")
    with pytest.raises(sigpu.InputError):
        prores.decode(b"not prores at all")


def x265_clip(folder, size, frames, *x265_args):
    """An x265 stream with MD5 hashes of FFmpeg's testsrc2 pattern."""
    y4m, out = folder / "src.y4m", folder / "clip.hevc"
    subprocess.run([need("ffmpeg"), "-v", "error", "-f", "lavfi", "-i",
                    f"testsrc2=size={size}:rate=25", "-frames:v", str(frames), "-pix_fmt",
                    "yuv420p", str(y4m)], check=True)
    subprocess.run([need("x265"), "--log-level", "error", "--input", str(y4m), *x265_args,
                    "--hash", "1", "--frame-threads", "1", "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def hevc_stream(tmp_path_factory):
    return x265_clip(tmp_path_factory.mktemp("hevc"), "128x80", 3, "--keyint", "1")


def test_hevc_matches_ffmpeg(hevc_stream):
    hevc = pytest.importorskip("sigpu.hevc")
    oracle = ffmpeg_planes(hevc_stream, "yuv420p", 128, 80, [(128, 80), (64, 40), (64, 40)],
                           np.uint8)
    for src in (hevc_stream, hevc_stream.read_bytes()):
        frames = list(hevc.decode(src, device="cpu"))
        assert len(frames) == 3
        for f, ref in zip(frames, oracle):
            assert (f.width, f.height, f.bit_depth, f.hash) == (128, 80, 8, "matched")
            for p, r in zip(f.planes, ref):
                assert p.dtype == "uint16"
                np.testing.assert_array_equal(np.asarray(p), r)


def test_hevc_errors():
    hevc = pytest.importorskip("sigpu.hevc")
    with pytest.raises(sigpu.InputError):
        list(hevc.decode(b"\x00" * 100))


@pytest.mark.gpu
def test_gpu_video_matches_cpu(prores_clip, hevc_stream):
    prores = pytest.importorskip("sigpu.prores")
    hevc = pytest.importorskip("sigpu.hevc")
    for a, b in zip(prores.decode(prores_clip, device="cpu"), prores.decode(prores_clip,
                                                                             device="cuda")):
        for p, q in zip(a.planes, b.planes):
            np.testing.assert_array_equal(np.asarray(p), np.asarray(q))
    for a, b in zip(hevc.decode(hevc_stream, device="cpu"), hevc.decode(hevc_stream,
                                                                        device="cuda")):
        assert b.hash == "matched"
        for p, q in zip(a.planes, b.planes):
            np.testing.assert_array_equal(np.asarray(p), np.asarray(q))


@pytest.fixture(scope="module")
def hevc_cropped(tmp_path_factory):
    """Random access (P and B pictures) at 124x76, which x265 codes as 128x80 cropped on the
    right and at the bottom."""
    return x265_clip(tmp_path_factory.mktemp("hevc_cropped"), "124x76", 9, "--keyint", "8",
                     "--bframes", "2")


def test_hevc_frames_on_device_need_the_gpu_reconstruction(hevc_stream):
    hevc = pytest.importorskip("sigpu.hevc")
    for device in ("cpu", "cpu-parallel"):
        with pytest.raises(sigpu.UsageError, match="frames on the device"):
            list(hevc.decode(hevc_stream, device=device, frames_on_device=True))


@pytest.mark.gpu
def test_hevc_frames_on_device_are_the_host_frames(hevc_stream, hevc_cropped):
    hevc = pytest.importorskip("sigpu.hevc")
    for stream in (hevc_stream, hevc_cropped):
        host = list(hevc.decode(stream, device="cuda"))
        for check_hash in (False, True):
            # Every frame kept: the decoder must not reuse a picture an array still holds.
            on_gpu = list(hevc.decode(stream, device="cuda", frames_on_device=True,
                                      check_hash=check_hash))
            assert len(on_gpu) == len(host) > 0
            for a, b in zip(host, on_gpu):
                assert (a.width, a.height, a.poc) == (b.width, b.height, b.poc)
                assert b.hash == ("matched" if check_hash else "unchecked")
                for p, q in zip(a.planes, b.planes):
                    assert q.device == "cuda:0" and q.__dlpack_device__() == (2, 0)
                    assert q.shape == p.shape
                    np.testing.assert_array_equal(np.asarray(p), q.numpy())


@pytest.mark.gpu
def test_hevc_frames_on_device_reach_torch_without_a_copy(hevc_stream):
    hevc = pytest.importorskip("sigpu.hevc")
    torch = pytest.importorskip("torch")
    host = list(hevc.decode(hevc_stream, device="cuda"))
    on_gpu = list(hevc.decode(hevc_stream, device="cuda", frames_on_device=True, check_hash=False))
    for a, b in zip(host, on_gpu):
        for p, q in zip(a.planes, b.planes):
            t = torch.from_dlpack(q)
            assert t.is_cuda and t.data_ptr() == q.__cuda_array_interface__["data"][0]
            np.testing.assert_array_equal(t.cpu().numpy(), np.asarray(p))
