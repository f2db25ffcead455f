#!/usr/bin/env python3
"""Random training clips from a corpus of FLAC files into float32 GPU tensors:
sigpu.flac.ClipLoader against libsndfile (the engine behind Python's soundfile) in a pool of
processes decoding the same clips, the main process copying each batch to the GPU.

    PYTHONPATH=build/python bench/python_clips.py [--cache DIR] [--files 1000] [--long-minutes 10]
        [--workers 16] [--batch-size 64] [--batches 40] [--clip-seconds 5]

The corpus (made once in DIR, default ${SIGPU_CACHE:-~/.cache/sigpu}/bench/clips-<files>-<m>m):
10 % long files tiled from the benchmark minute (scripts/make-bench-corpus --only-60s makes
music-60s.flac; without it a generated stand-in is used, and said so), each starting elsewhere in
the minute, the rest 30-second clips of it, encoded by the `flac` CLI (-5). Both sides decode
the clips of the same plan (ClipLoader.plan: same seed, same files, same starts). Prints clips/s,
the ratio, the PCIe bound for the compressed bytes of the clips (a pinned host-to-device copy
measured in the same run), single-clip warm latency (median of 100 one-clip batches), and checks
a sample of clips between libsndfile and sigpu (float32, equal within 1e-6). Without a GPU (or
without torch and CuPy for the copy) only the host rows run.
"""
import argparse
import ctypes
import ctypes.util
import importlib.util
import multiprocessing as mp
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import sigpu
import sigpu.flac

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--cache", help="corpus folder (made if missing, else reused)")
ap.add_argument("--source", help="the minute to tile (default: the cache's music-60s.flac)")
ap.add_argument("--files", type=int, default=1000)
ap.add_argument("--long-minutes", type=float, default=10.0)
ap.add_argument("--short-seconds", type=float, default=30.0)
ap.add_argument("--workers", type=int, default=16)
ap.add_argument("--batch-size", type=int, default=64)
ap.add_argument("--batches", type=int, default=40)
ap.add_argument("--clip-seconds", type=float, default=5.0)
ap.add_argument("--seed", type=int, default=0)
a = ap.parse_args()

cache_root = pathlib.Path(os.environ.get("SIGPU_CACHE", pathlib.Path.home() / ".cache/sigpu"))
corpus = pathlib.Path(a.cache or cache_root / "bench" / f"clips-{a.files}-{a.long_minutes:g}m")


# ---- the corpus --------------------------------------------------------------------------------

def source_minute():
    """(int16 PCM (samples, channels), rate, what it is)."""
    src = pathlib.Path(a.source or cache_root / "bench" / "music-60s.flac")
    if src.exists():
        pcm = sigpu.flac.decode(str(src), device="cpu", dtype="int16")
        return np.asarray(pcm).copy(), pcm.sample_rate, str(src)
    # A stand-in with music's spread of bits: chords, a beat and noise, 48 kHz stereo.
    rate = 48000
    t = np.arange(60 * rate) / rate
    rng = np.random.default_rng(7)
    x = sum(0.12 * np.sin(2 * np.pi * f * t) for f in (110, 164.8, 220, 277.2, 329.6))
    x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 0.5 * t)) + 0.3 * np.exp(-(t % 0.5) * 20) * \
        rng.normal(0, 1, t.size)
    st = np.stack([x, np.roll(x, 441)], 1) + rng.normal(0, 0.01, (t.size, 2))
    return (np.clip(st, -1, 1) * 32000).astype(np.int16), rate, "generated stand-in (no music-60s)"


def encode(job):
    path, pcm, rate = job
    subprocess.run(["flac", "-5", "-s", "-f", "--force-raw-format", "--endian=little",
                    "--sign=signed", f"--channels={pcm.shape[1]}", "--bps=16",
                    f"--sample-rate={rate}", "-o", str(path) + ".tmp", "-"],
                   input=pcm.astype("<i2").tobytes(), check=True)
    os.replace(str(path) + ".tmp", path)


def make_corpus():
    names = [corpus / ("long" if i % 10 == 0 else "short") / f"{i:05d}.flac"
             for i in range(a.files)]
    if all(p.exists() for p in names):
        return [str(p) for p in names], "reused"
    if not shutil.which("flac"):
        sys.exit("python_clips: the flac CLI is needed to make the corpus (apt-get install flac)")
    pcm, rate, what = source_minute()
    n = len(pcm)
    jobs = []
    for i, p in enumerate(names):
        if p.exists():
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        length = int((a.long_minutes * 60 if i % 10 == 0 else a.short_seconds) * rate)
        at = (i * 7919 * rate // 10) % n  # each file starts elsewhere in the minute
        idx = (at + np.arange(length)) % n
        jobs.append((p, pcm[idx], rate))
    t = time.perf_counter()
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        list(pool.map(encode, jobs))
    return [str(p) for p in names], f"made from {what} in {time.perf_counter() - t:.0f} s"


files, how = make_corpus()
print(f"corpus: {corpus}: {len(files)} files ({how}), "
      f"{sum(os.path.getsize(f) for f in files) / 1e9:.2f} GB")


# ---- the peer: libsndfile in a process pool ----------------------------------------------------

class SfInfo(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int),
                ("channels", ctypes.c_int), ("format", ctypes.c_int),
                ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]


_sf = None


def sf_clip(path, start, length):
    """float32 (channels, length) by libsndfile: soundfile where installed, else ctypes."""
    global _sf
    if importlib.util.find_spec("soundfile"):
        import soundfile

        with soundfile.SoundFile(path) as f:
            f.seek(start)
            x = f.read(length, dtype="float32", always_2d=True)
        out = np.zeros((length, x.shape[1]), np.float32)
        out[:len(x)] = x
        return out.T
    if _sf is None:
        _sf = ctypes.CDLL(ctypes.util.find_library("sndfile") or "libsndfile.so.1")
        _sf.sf_open.restype = ctypes.c_void_p
        _sf.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(SfInfo)]
        _sf.sf_seek.restype = ctypes.c_int64
        _sf.sf_seek.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int]
        _sf.sf_readf_float.restype = ctypes.c_int64
        _sf.sf_readf_float.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        _sf.sf_close.argtypes = [ctypes.c_void_p]
    info = SfInfo()
    h = _sf.sf_open(path.encode(), 0x10, ctypes.byref(info))  # SFM_READ
    if not h:
        raise OSError(f"libsndfile cannot open {path}")
    try:
        out = np.zeros((length, info.channels), np.float32)
        if _sf.sf_seek(h, start, 0) < 0:
            raise OSError(f"libsndfile cannot seek {path} to {start}")
        _sf.sf_readf_float(h, out.ctypes.data, length)
    finally:
        _sf.sf_close(h)
    return out.T


def sf_job(job):
    return sf_clip(*job)


loader = sigpu.flac.ClipLoader(files, a.clip_seconds, a.batch_size, device="cpu", seed=a.seed)
which, starts = loader.plan(0)
nb = min(a.batches, len(loader))
n_clips = nb * a.batch_size
which, starts = which[:n_clips], starts[:n_clips]
L = loader.clip_samples
jobs = [(loader.files[w], int(s), L) for w, s in zip(which, starts)]
engine = "soundfile" if importlib.util.find_spec("soundfile") else "libsndfile.so.1 (ctypes)"

cuda = sigpu.cuda_compiled() and len(sigpu.cuda_devices()) > 0
torch = cupy = None
if cuda and importlib.util.find_spec("torch"):
    import torch
elif cuda and importlib.util.find_spec("cupy"):
    import cupy
copier = "torch" if torch else "cupy" if cupy else None
if cuda and not copier:
    print("note: neither torch nor CuPy: the peer's batches stay on the host (no GPU copy)")


def to_gpu(batch):
    if torch is not None:
        return torch.from_numpy(batch).to("cuda")
    if cupy is not None:
        return cupy.asarray(batch)
    return batch


def sync():
    if torch is not None:
        torch.cuda.synchronize()
    elif cupy is not None:
        cupy.cuda.Device().synchronize()


def consume(batch):
    """A sigpu batch taken as a tensor by the consumer (no copy)."""
    if torch is not None:
        return torch.from_dlpack(batch)
    if cupy is not None and batch.device != "cpu":
        return cupy.asarray(batch)
    return batch


rows = []


def row(name, clips, seconds):
    rows.append((name, clips / seconds))
    print(f"{name:<58} {clips / seconds:10.1f} clips/s  ({clips} clips in {seconds:.2f} s)")
    return clips / seconds


# fork: the workers run libsndfile only, never CUDA, and need not re-run this script.
with mp.get_context("fork").Pool(a.workers) as pool:
    pool.map(sf_job, jobs[:a.workers])  # workers started and warm
    t = time.perf_counter()
    it = pool.imap(sf_job, jobs, chunksize=4)
    for b in range(nb):
        batch = np.stack([next(it) for _ in range(a.batch_size)])
        gpu_batch = to_gpu(batch) if cuda else batch
    sync()
    peer = row(f"libsndfile ({engine}), {a.workers}-process pool"
               + (f", to GPU ({copier})" if cuda and copier else ""), n_clips,
               time.perf_counter() - t)

# ---- sigpu ------------------------------------------------------------------------------------

results = {}
for device in (["cuda"] if cuda else []) + ["cpu"]:
    ld = sigpu.flac.ClipLoader(files, a.clip_seconds, a.batch_size, device=device, seed=a.seed)
    ld.set_epoch(1)
    for _, (batch, meta) in zip(range(2), ld):  # warm: decoders, pools, page cache
        consume(batch)
    ld.set_epoch(0)
    t = time.perf_counter()
    for _, (batch, meta) in zip(range(nb), ld):
        consume(batch)
    sync()
    results[device] = row(f"sigpu.flac.ClipLoader, device={device}", n_clips,
                          time.perf_counter() - t)

# ---- ratios, the PCIe bound, latency, agreement -----------------------------------------------

sizes = np.array([os.path.getsize(f) for f in loader.files], np.float64)
per_clip = float(np.mean(sizes[which] / loader.lengths[which] * L))  # compressed bytes a clip
best = results.get("cuda", results["cpu"])
print(f"\nratio sigpu ({'cuda' if cuda else 'cpu'}) / peer: {best / peer:.1f}x (target >= 20x, on the GPU)")
print(f"compressed bytes per clip: {per_clip / 1e6:.3f} MB")
if cuda and copier:
    n = 256 << 20
    if torch is not None:
        host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        dev = torch.empty(n, dtype=torch.uint8, device="cuda")
        copy = lambda: dev.copy_(host, non_blocking=True)  # noqa: E731
    else:
        import cupyx

        host = cupyx.empty_pinned(n, np.uint8)
        dev = cupy.empty(n, np.uint8)
        copy = lambda: dev.set(host)  # noqa: E731
    copy()
    sync()
    t = time.perf_counter()
    for _ in range(10):
        copy()
    sync()
    h2d = 10 * n / (time.perf_counter() - t)
    bound = h2d / per_clip
    print(f"pinned host-to-device copy: {h2d / 1e9:.1f} GB/s -> PCIe bound {bound:.0f} clips/s "
          f"for the compressed bytes; 70 %: {0.7 * bound:.0f}; sigpu at "
          f"{100 * best / bound:.1f} % of the bound")
    print(f"target: {min(20 * peer, 0.7 * bound):.0f} clips/s (the lower of 20x the peer and 70 % "
          f"of the bound): {'met' if best >= min(20 * peer, 0.7 * bound) else 'NOT met'}")

rng = np.random.default_rng(a.seed + 1)
for device in (["cuda"] if cuda else []) + ["cpu"]:
    times = []
    for k in range(110):
        j = jobs[int(rng.integers(len(jobs)))]
        t = time.perf_counter()
        x = sigpu.flac.decode_clips([j[0]], [j[1]], length=L, device=device, dtype="float32",
                                    channels_first=True)
        consume(x)
        sync()
        if k >= 10:
            times.append(time.perf_counter() - t)
    print(f"single clip, device={device}: median {1e3 * statistics.median(times):.2f} ms "
          f"(min {1e3 * min(times):.2f}, 100 warm calls; target < 2 ms)")

check = [jobs[int(i)] for i in rng.choice(len(jobs), min(20, len(jobs)), replace=False)]
ref = np.stack([sf_clip(*j) for j in check])
for device in (["cuda"] if cuda else []) + ["cpu"]:
    got = sigpu.flac.decode_clips([j[0] for j in check], [j[1] for j in check], length=L,
                                  device=device, dtype="float32", channels_first=True)
    got = got.numpy() if got.device != "cpu" else np.asarray(got)
    diff = float(np.abs(got - ref).max())
    print(f"check, {len(check)} clips, device={device} vs libsndfile: max |diff| {diff:.2e}")
    if diff > 1e-6:
        sys.exit(f"python_clips: sigpu ({device}) and libsndfile disagree")
