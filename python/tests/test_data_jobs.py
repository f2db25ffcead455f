"""The clip loader (clips against the known PCM they were cut from) and corpus jobs on a real
Dask LocalCluster (worker processes)."""

import pathlib
import shutil

import numpy as np
import pytest

import sigpu
import sigpu.data
import sigpu.flac


@pytest.fixture(scope="module")
def corpus(make_flac, tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    pcm = {}
    for i, n in enumerate([30000, 50000, 20000, 500]):
        path, p = make_flac(samples=n, channels=2, seed=10 + i)
        shutil.copy(path, folder / f"f{i}.flac")
        pcm[str(folder / f"f{i}.flac")] = p
    (folder / "sub").mkdir()
    path, p = make_flac(samples=40000, channels=1, seed=20)
    shutil.copy(path, folder / "sub" / "mono.flac")
    return folder, pcm


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


def test_clip_loader(corpus):
    folder, pcm = corpus
    loader = sigpu.data.ClipLoader(folder, seconds=0.1, batch_size=8, batches_per_epoch=3,
                                   device="cpu", dtype="int16", seed=4)
    assert len(loader) == 3 and loader.length == 4410
    assert sorted(pathlib.Path(p).name for p in loader.skipped) == ["f3.flac", "mono.flac"]
    epoch = [np.asarray(b) for b in loader]
    assert len(epoch) == 3 and all(b.shape == (8, 4410, 2) for b in epoch)
    # Every clip is a piece of one of the files.
    for clip in epoch[0]:
        assert any(
            (np.lib.stride_tricks.sliding_window_view(p[:, 0], 4410) == clip[:, 0]).all(1).any()
            for p in pcm.values())
    again = sigpu.data.ClipLoader(folder, seconds=0.1, batch_size=8, batches_per_epoch=3,
                                  device="cpu", dtype="int16", seed=4)
    np.testing.assert_array_equal(np.asarray(next(iter(again))), epoch[0])


def test_verify_on_a_local_cluster(corpus, tmp_path):
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client, LocalCluster

    import sigpu.jobs

    folder, _ = corpus
    bad = folder / "bad.flac"
    data = bytearray((folder / "f1.flac").read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    bad.write_bytes(bytes(data))
    (folder / "junk.flac").write_bytes(b"junk" * 100)
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            report = sigpu.jobs.verify(folder, client=client)
    finally:
        bad.unlink()
        (folder / "junk.flac").unlink()
    by_name = {pathlib.Path(r["path"]).name: r for r in report}
    assert len(by_name) == 7
    for name in ("f0.flac", "f1.flac", "f2.flac", "f3.flac", "mono.flac"):
        assert by_name[name]["ok"] and by_name[name]["md5"] == "match", by_name[name]
    assert not by_name["bad.flac"]["ok"] and by_name["bad.flac"]["damage"]
    assert not by_name["junk.flac"]["ok"] and by_name["junk.flac"]["error"]


@pytest.mark.gpu
def test_gpu_clip_loader(corpus):
    folder, _ = corpus
    loader = sigpu.data.ClipLoader(folder, seconds=0.1, batch_size=4, batches_per_epoch=2,
                                   device="cuda", dtype="float32", seed=1)
    cpu = sigpu.data.ClipLoader(folder, seconds=0.1, batch_size=4, batches_per_epoch=2,
                                device="cpu", dtype="float32", seed=1)
    for g, c in zip(loader, cpu):
        assert g.device == "cuda:0" and g.shape == (4, 4410, 2)
        np.testing.assert_array_equal(g.numpy(), np.asarray(c))
