"""sigpu.dask on a real LocalCluster of worker processes: a corpus decoded to WAV and NumPy
files (checked against the PCM the reference encoder was given), a damaged and a junk file
reported after their retry, an existing output refused, and the checks of verify()."""

import pathlib
import shutil
import wave

import numpy as np
import pytest

import sigpu

pytest.importorskip("dask.distributed")
import sigpu.dask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def corpus(make_flac, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dask_corpus")
    pcm = {}
    for name, kw in [("a.flac", dict(samples=30000, channels=2, seed=31)),
                     ("x/b.flac", dict(samples=20000, channels=1, seed=32)),
                     ("x/y/c24.flac", dict(samples=10000, channels=2, bits=24, seed=33))]:
        path, p = make_flac(**kw)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, folder / name)
        pcm[name] = (p, kw.get("bits", 16))
    data = bytearray((folder / "a.flac").read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 64):
        data[i] ^= 0x5A
    (folder / "x" / "damaged.flac").write_bytes(bytes(data))
    (folder / "junk.flac").write_bytes(b"junk" * 100)
    return folder, pcm


def read_wav(path):
    with wave.open(str(path)) as w:
        width, ch, raw = w.getsampwidth(), w.getnchannels(), w.readframes(w.getnframes())
    b = np.frombuffer(raw, np.uint8).reshape(-1, width)
    wide = np.zeros((len(b), 4), np.uint8)
    wide[:, 4 - width:] = b
    return (wide.view("<i4")[:, 0] >> (32 - 8 * width)).reshape(-1, ch), width


def test_decode_corpus_to_wav_with_retries_and_refusals(client, corpus, tmp_path):
    folder, pcm = corpus
    out = tmp_path / "out"
    (out / "x").mkdir(parents=True)
    (out / "x" / "b.wav").write_bytes(b"mine")
    records = sigpu.dask.decode_corpus(client, folder, out)
    by = {str(pathlib.Path(r["path"]).relative_to(folder)): r for r in records}
    assert sorted(by) == ["a.flac", "junk.flac", "x/b.flac", "x/damaged.flac", "x/y/c24.flac"]
    for name in ("a.flac", "x/y/c24.flac"):
        r = by[name]
        assert r["ok"] and r["attempts"] == 1 and r["md5"] == "match" and r["md5_ok"], r
        p, bits = pcm[name]
        got, width = read_wav(r["output"])
        assert r["output"] == str(out / name.replace(".flac", ".wav")) and width == bits // 8
        np.testing.assert_array_equal(got, p)
        full = 2.0 ** (bits - 1)
        assert r["peak"] == pytest.approx(np.abs(p).max() / full)
        assert r["rms"] == pytest.approx(np.sqrt(np.mean((p / full) ** 2)))
        assert r["samples"] == len(p) and r["seconds"] == pytest.approx(len(p) / 44100)
        assert r["channels"] == p.shape[1] and r["worker"]
    assert not by["x/b.flac"]["ok"] and by["x/b.flac"]["attempts"] == 0
    assert "exists" in by["x/b.flac"]["error"]
    assert (out / "x" / "b.wav").read_bytes() == b"mine"
    for name in ("junk.flac", "x/damaged.flac"):
        r = by[name]
        assert not r["ok"] and r["attempts"] == 2 and r["error"], r
        assert len(set(r["workers"])) == 2  # the retry ran on the other worker
        assert not (out / name.replace(".flac", ".wav")).exists()
    assert by["x/damaged.flac"]["damage"]
    assert not list(out.rglob("*.partial-*"))

    again = sigpu.dask.decode_corpus(client, [folder / "x" / "b.flac"], out, overwrite=True,
                                     format="npy", root=folder)
    assert again[0]["ok"] and again[0]["output"] == str(out / "x" / "b.npy")
    np.testing.assert_array_equal(np.load(out / "x" / "b.npy"),
                                  (pcm["x/b.flac"][0] / 32768).astype(np.float32))
    inside = sigpu.dask.decode_corpus(client, [folder / "a.flac"], folder, format="wav")
    assert inside[0]["ok"] and (folder / "a.wav").exists()
    (folder / "a.wav").unlink()
    shutil.copy(folder / "a.flac", tmp_path / "t.npy")  # a FLAC file with an odd name
    clash = sigpu.dask.decode_corpus(client, [tmp_path / "t.npy"], tmp_path, format="npy")
    assert not clash[0]["ok"] and "overwrite an input" in clash[0]["error"]
    with pytest.raises(sigpu.UsageError):
        sigpu.dask.decode_corpus(client, folder, out, format="flac")


def test_verify_reports_every_file(client, corpus):
    folder, _ = corpus
    records = sigpu.dask.verify(client, folder)
    by = {pathlib.Path(r["path"]).name: r for r in records}
    assert all(by[n]["ok"] and by[n]["md5"] == "match" for n in ("a.flac", "b.flac", "c24.flac"))
    assert not by["junk.flac"]["ok"] and by["junk.flac"]["attempts"] == 2
    assert by["damaged.flac"]["damage"] and not by["damaged.flac"]["ok"]
    assert all(r["output"] is None for r in records)


def test_worker_devices_pin_one_gpu_per_worker(client):
    devices = sigpu.dask.worker_devices(client)
    assert sorted(devices) == sorted(client.scheduler_info()["workers"])
    # Both workers share this host: devices 0 and 1 where it has two GPUs, else they share.
    n = max(1, len(sigpu.cuda_devices()) if sigpu.cuda_compiled() else 0)
    assert sorted(devices.values()) == sorted(f"cuda:{r % n}" for r in range(len(devices)))
