"""sigpu.flac.ClipLoader and decode_clips: clips checked against the PCM the files were encoded
from (the reference encoder made them), plans checked for determinism and coverage."""

import pathlib
import shutil
import threading

import numpy as np
import pytest

import sigpu
import sigpu.flac

CLIP = 4410  # 0.1 s at 44.1 kHz


@pytest.fixture(scope="module")
def corpus(make_flac, tmp_path_factory):
    """Three usable stereo files, one too short, one mono, one at 48 kHz, one junk."""
    folder = tmp_path_factory.mktemp("corpus")
    pcm = {}
    for i, n in enumerate([30000, 50000, 20000, 500]):
        path, p = make_flac(samples=n, channels=2, seed=10 + i)
        shutil.copy(path, folder / f"f{i}.flac")
        pcm[str(folder / f"f{i}.flac")] = p
    (folder / "sub").mkdir()
    path, p = make_flac(samples=40000, channels=1, seed=20)
    shutil.copy(path, folder / "sub" / "mono.flac")
    pcm[str(folder / "sub" / "mono.flac")] = p
    path, p = make_flac(samples=40000, channels=2, rate=48000, seed=21)
    shutil.copy(path, folder / "sub" / "r48.flac")
    pcm[str(folder / "sub" / "r48.flac")] = p
    (folder / "sub" / "junk.flac").write_bytes(b"junk" * 100)
    return folder, pcm


def clip_of(pcm, path, start, channels=None):
    """The expected float32 clip (channels, CLIP) from the source PCM, zero-padded."""
    x = pcm[path][start:start + CLIP].astype(np.float64) / 32768
    if channels == 1:
        x = x.mean(axis=1, keepdims=True)
    out = np.zeros((CLIP, x.shape[1]))
    out[:len(x)] = x
    return out.T.astype(np.float32)


def test_decode_clips(make_flac):
    (a, pa), (b, pb) = make_flac(samples=30000, seed=1), make_flac(samples=30000, seed=2)
    out = sigpu.flac.decode_clips([a, b, a], [100, 2000, 29000], length=4000, device="cpu",
                                  dtype="int16")
    assert out.shape == (3, 4000, 2) and out.device == "cpu"
    x = np.asarray(out)
    np.testing.assert_array_equal(x[0], pa[100:4100])
    np.testing.assert_array_equal(x[1], pb[2000:6000])
    np.testing.assert_array_equal(x[2, :1000], pa[29000:])
    assert not x[2, 1000:].any()
    planar = sigpu.flac.decode_clips([a], [5], length=10, device="cpu", dtype="int16",
                                     channels_first=True)
    np.testing.assert_array_equal(np.asarray(planar)[0], pa[5:15].T)
    (m, pm) = make_flac(samples=30000, channels=1, seed=3)
    mono = np.asarray(sigpu.flac.decode_clips([a, m], [7, 9], length=50, device="cpu",
                                              dtype="int32", mono=True))
    assert mono.shape == (2, 50, 1)
    np.testing.assert_array_equal(mono[0, :, 0], pa[7:57].sum(1) * 32768)  # exact at int32 scale
    np.testing.assert_array_equal(mono[1, :, 0] >> 16, pm[9:59, 0])
    with pytest.raises(sigpu.UsageError):
        sigpu.flac.decode_clips([a, m], [0, 0], length=10, device="cpu")


@pytest.mark.gpu
def test_decode_clips_on_the_gpu_equal_the_cpu(make_flac):
    """The batch the GPU writes in its memory equals the CPU's, value for value: 16- and 24-bit
    files, 1 to 3 channels, clips at a file's start, end and past it, both layouts, mono."""
    (a, _), (b, _) = make_flac(samples=90000, seed=31), make_flac(samples=70000, bits=24, seed=32)
    (m, _), (t, _) = (make_flac(samples=60000, channels=1, seed=33),
                      make_flac(samples=80000, channels=3, bits=24, seed=34))
    cases = [([a, b, a, b, a], [0, 0, 90000 - 20000, 60000, 85000], False),
             ([a, m, t, t, m], [5, 40000, 0, 79000, 12345], True),
             ([t, t, t], [0, 30000, 60000], False),
             ([b], [777], False)]
    for srcs, starts, mono in cases:
        for dtype in ("float32", "int16"):
            for first in (True, False):
                kw = dict(length=20000, dtype=dtype, channels_first=first, mono=mono)
                cpu = sigpu.flac.decode_clips(srcs, starts, device="cpu", **kw)
                gpu = sigpu.flac.decode_clips(srcs, starts, device="cuda", **kw)
                assert gpu.device.startswith("cuda") and gpu.shape == cpu.shape
                np.testing.assert_array_equal(gpu.numpy(), np.asarray(cpu))


def test_clips_are_the_files_samples_and_epochs_repeat(corpus):
    folder, pcm = corpus
    loader = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", seed=4)
    names = {pathlib.Path(p).name: why for p, why in loader.skipped.items()}
    assert sorted(names) == ["f3.flac", "junk.flac", "mono.flac", "r48.flac"]
    assert "48000" in names["r48.flac"] and "channels" in names["mono.flac"]
    assert loader.sample_rate == 44100 and loader.channels == 2 and loader.clip_samples == CLIP
    assert loader.clips_per_epoch == 30000 // CLIP + 50000 // CLIP + 20000 // CLIP
    assert len(loader) == loader.clips_per_epoch // 8
    epoch = list(loader)
    assert len(epoch) == len(loader)
    for n, (batch, meta) in enumerate(epoch):
        assert batch.shape == (8, 2, CLIP) and batch.dtype == "float32" and batch.device == "cpu"
        assert meta["batch"] == n and meta["epoch"] == 0 and meta["sample_rate"] == 44100
        x = np.asarray(batch)
        for k, (path, start) in enumerate(zip(meta["files"], meta["starts"])):
            assert 0 <= start <= len(pcm[path]) - CLIP
            np.testing.assert_array_equal(x[k], clip_of(pcm, path, start))
    second = [meta["starts"] for _, meta in loader]
    assert not all(np.array_equal(a, b[1]["starts"]) for a, b in zip(second, epoch))
    again = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", seed=4)
    for (b0, m0), (b1, m1) in zip(epoch, again):
        assert m0["files"] == m1["files"] and np.array_equal(m0["starts"], m1["starts"])
        np.testing.assert_array_equal(np.asarray(b0), np.asarray(b1))
    other = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", seed=5)
    assert not np.array_equal(other.plan(0)[1], again.plan(0)[1])
    again.set_epoch(1)
    assert next(iter(again))[1]["epoch"] == 1


def test_draws_cover_the_corpus_in_proportion(corpus):
    folder, _ = corpus
    loader = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", seed=0)
    which, starts = zip(*(loader.plan(e) for e in range(400)))
    which, starts = np.concatenate(which), np.concatenate(starts)
    room = loader.lengths - CLIP + 1
    assert (starts >= 0).all() and (starts < room[which]).all()
    share = np.bincount(which, minlength=len(loader.files)) / len(which)
    np.testing.assert_allclose(share, room / room.sum(), atol=0.03)
    for f in range(len(loader.files)):  # starts spread over each whole file
        s = starts[which == f] / room[f]
        assert s.min() < 0.05 and s.max() > 0.95 and abs(s.mean() - 0.5) < 0.05


def test_sweep_without_shuffle(corpus):
    folder, pcm = corpus
    loader = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", shuffle=False)
    got = [(p, s) for batch, meta in loader for p, s in zip(meta["files"], meta["starts"])]
    want = [(p, s) for p, n in zip(loader.files, loader.lengths)
            for s in range(0, n - CLIP + 1, CLIP)]
    assert got == want and len(loader) == -(-len(want) // 8)
    batch, meta = list(loader)[-1]
    assert batch.shape[0] == len(want) % 8 or batch.shape[0] == 8
    np.testing.assert_array_equal(np.asarray(batch)[-1], clip_of(pcm, *want[-1]))


def test_downmix_and_rate_choice(corpus):
    folder, pcm = corpus
    mono = sigpu.flac.ClipLoader(folder, 0.1, 4, channels=1, device="cpu", shuffle=False)
    assert any(p.endswith("mono.flac") for p in mono.files)
    for batch, meta in mono:
        x = np.asarray(batch)
        assert x.shape[1] == 1
        for k, (path, start) in enumerate(zip(meta["files"], meta["starts"])):
            np.testing.assert_allclose(x[k], clip_of(pcm, path, start, channels=1), atol=1e-7)
    first_mono = sigpu.flac.ClipLoader([folder / "sub" / "mono.flac", folder / "f0.flac"], 0.1, 2,
                                       device="cpu")
    assert first_mono.channels == 1 and "2 channels" in first_mono.skipped[str(folder / "f0.flac")]
    r48 = sigpu.flac.ClipLoader(folder, 0.1, 2, sample_rate=48000, device="cpu")
    assert [pathlib.Path(p).name for p in r48.files] == ["r48.flac"]
    assert r48.clip_samples == 4800 and "44100" in r48.skipped[str(folder / "f0.flac")]


def loader_threads():
    return [t for t in threading.enumerate() if t.name.startswith("sigpu-clips")]


def open_descriptors():
    return len(list(pathlib.Path("/proc/self/fd").iterdir()))


def test_mapped_files_stand_for_paths(corpus, tmp_path):
    folder, pcm = corpus
    path = str(folder / "f1.flac")
    m = sigpu.MappedFile(path)
    assert m.name == path and len(m) == pathlib.Path(path).stat().st_size
    np.testing.assert_array_equal(np.asarray(sigpu.flac.decode(m, device="cpu", dtype="int16")),
                                  pcm[path])
    clips = sigpu.flac.decode_clips([m, path], [5, 5], length=CLIP, device="cpu",
                                    channels_first=True)
    np.testing.assert_array_equal(np.asarray(clips)[0], np.asarray(clips)[1])
    with pytest.raises(sigpu.InputError, match="nothing-here"):
        sigpu.MappedFile(tmp_path / "nothing-here.flac")
    with pytest.raises(sigpu.InputError, match="not a regular file"):
        sigpu.MappedFile(tmp_path)
    del m, clips  # the mapping outlives neither


def test_loader_keeps_mappings_not_descriptors(corpus):
    folder, _ = corpus
    before = open_descriptors()
    loader = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", seed=4, mapped_files=2)
    few = list(loader)
    assert 0 < len(loader._maps) <= 2 and open_descriptors() == before
    every = sigpu.flac.ClipLoader(folder, 0.1, 8, device="cpu", seed=4)
    for (b0, m0), (b1, m1) in zip(few, every):
        assert m0["files"] == m1["files"]
        np.testing.assert_array_equal(np.asarray(b0), np.asarray(b1))
    assert len(every._maps) == len(every.files) and open_descriptors() == before


def test_prefetch_stops_on_break_and_raises_errors(corpus, tmp_path):
    folder, _ = corpus
    loader = sigpu.flac.ClipLoader(folder, 0.1, 2, device="cpu")
    for batch, meta in loader:
        break
    assert not loader_threads()
    it = iter(loader)
    next(it)
    del it
    assert not loader_threads()
    shutil.copy(folder / "f1.flac", tmp_path / "gone.flac")
    gone = sigpu.flac.ClipLoader([tmp_path / "gone.flac"], 0.1, 2, device="cpu")
    (tmp_path / "gone.flac").unlink()
    with pytest.raises(sigpu.Error, match="gone.flac"):
        list(gone)
    assert not loader_threads()


def test_torch_dataloader_workers_share_the_epoch(corpus):
    torch = pytest.importorskip("torch")
    folder, _ = corpus
    loader = sigpu.flac.ClipLoader(folder, 0.1, 2, device="cpu", seed=3)
    assert isinstance(loader, torch.utils.data.IterableDataset)
    dl = torch.utils.data.DataLoader(loader, batch_size=None, num_workers=2)
    seen = sorted(int(meta["batch"]) for batch, meta in dl)
    assert seen == list(range(len(loader)))


@pytest.mark.gpu
def test_gpu_batches_match_the_cpu(corpus):
    folder, _ = corpus
    cpu = sigpu.flac.ClipLoader(folder, 0.1, 4, device="cpu", seed=1)
    for devices in (None, [0, 0]):  # [0, 0]: two decoding threads taking turns on one GPU
        gpu = sigpu.flac.ClipLoader(folder, 0.1, 4, device="cuda", devices=devices, seed=1)
        for (g, gm), (c, cm) in zip(gpu, cpu):
            assert g.device == "cuda:0" and g.shape == (4, 2, CLIP) and gm["files"] == cm["files"]
            np.testing.assert_array_equal(g.numpy(), np.asarray(c))
        cpu.set_epoch(0)
    assert not loader_threads()
