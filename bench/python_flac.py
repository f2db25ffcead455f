#!/usr/bin/env python3
"""The Python package on one long FLAC file, as a training loader uses it, beside the Python
decoders a user would otherwise pick (soundfile, torchaudio: each timed only where installed).
Prints min/median/max over the runs, the ratio to the first peer found (else to sigpu's CPU
decode), and checks every sigpu result against soundfile's or sigpu's own CPU decode.

    PYTHONPATH=build/python bench/python_flac.py FILE.flac [--clips N] [--seconds S] [--repeat R]
"""
import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import time

import numpy as np

import sigpu
import sigpu.flac

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--clips", type=int, default=1000)
ap.add_argument("--seconds", type=float, default=5.0)
ap.add_argument("--repeat", type=int, default=3)
a = ap.parse_args()

info = sigpu.flac.info(a.path)
rate, total = info.sample_rate, info.total_samples
length = int(a.seconds * rate)
rng = np.random.default_rng(1)
starts = [int(s) for s in rng.integers(0, total - length, a.clips)]
cuda = sigpu.cuda_compiled() and len(sigpu.cuda_devices()) > 0


def timed(fn):
    fn()  # warm-up (and the result to check)
    times = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        out = fn()
        if hasattr(out, "__cuda_array_interface__"):
            out.numpy()  # the result reaches the host inside the timing
        times.append(time.perf_counter() - t)
    return out, times


rows = []


def row(name, fn):
    out, times = timed(fn)
    rows.append((name, times))
    return out


peers = []
if importlib.util.find_spec("soundfile"):
    import soundfile
    whole_ref = row("soundfile.read, whole file", lambda: soundfile.read(a.path, dtype="int16")[0])
    peers.append("soundfile.read, whole file")

    def sf_clips():
        with soundfile.SoundFile(a.path) as f:
            out = []
            for s in starts:
                f.seek(s)
                out.append(f.read(length, dtype="int16"))
            return np.stack(out)
    clips_ref = row(f"soundfile seek+read, {a.clips} clips", sf_clips)
    peers.append(f"soundfile seek+read, {a.clips} clips")
else:
    whole_ref = clips_ref = None
if importlib.util.find_spec("torchaudio"):
    import torchaudio
    try:
        row("torchaudio.load, whole file", lambda: torchaudio.load(a.path)[0])
        peers.append("torchaudio.load, whole file")
    except Exception as e:  # its backends (FFmpeg, sox) may be absent
        print(f"torchaudio: {e}")

flac_cli = os.environ.get("SIGPU_FLAC_CLI") or shutil.which("flac")
if flac_cli:
    def flac_d():
        raw = subprocess.run([flac_cli, "-s", "-d", "-c", "--force-raw-format", "--endian=little",
                              "--sign=signed", a.path], check=True, capture_output=True).stdout
        return np.frombuffer(raw, "<i2").reshape(-1, info.channels)
    flac_ref = row("libFLAC `flac -d` through a pipe, whole file", flac_d)
    peers.append("libFLAC `flac -d` through a pipe, whole file")
    if whole_ref is None:
        whole_ref = flac_ref

cpu = row("sigpu.flac.decode cpu, whole file",
          lambda: sigpu.flac.decode(a.path, device="cpu", dtype="int16").numpy())
want = whole_ref if whole_ref is not None else cpu
np.testing.assert_array_equal(cpu, want)
if cuda:
    got = row("sigpu.flac.decode cuda, whole file (to host)",
              lambda: sigpu.flac.decode(a.path, device="cuda", dtype="int16", verify=False))
    np.testing.assert_array_equal(got.numpy(), want)
clips_cpu = row(f"sigpu.flac.decode_clips cpu, {a.clips} clips",
                lambda: sigpu.flac.decode_clips([a.path] * a.clips, starts, length=length,
                                                device="cpu", dtype="int16").numpy())
if clips_ref is not None:
    np.testing.assert_array_equal(clips_cpu, clips_ref)
if cuda:
    got = row(f"sigpu.flac.decode_clips cuda, {a.clips} clips (to host)",
              lambda: sigpu.flac.decode_clips([a.path] * a.clips, starts, length=length,
                                              device="cuda", dtype="int16"))
    np.testing.assert_array_equal(got.numpy(), clips_cpu)

print(f"file: {a.path}: {total / rate:.1f} s at {rate} Hz, {info.channels} ch; "
      f"{a.clips} clips of {a.seconds} s; median of {a.repeat} after a warm-up")
print(f"{'row':58s} {'median s':>9s} {'min s':>9s} {'max s':>9s} {'x peer':>7s}")
for name, times in rows:
    base = [t for n, t in rows if n in peers and ("clips" in n) == ("clips" in name)]
    ref = statistics.median(base[0]) if base else None
    med = statistics.median(times)
    ratio = f"{ref / med:7.2f}" if ref else "      -"
    print(f"{name:58s} {med:9.4f} {min(times):9.4f} {max(times):9.4f} {ratio}")
print("x peer: the first peer row of the same kind (whole file or clips) / this row; "
      "correctness: every sigpu result equals the peer's decode" if whole_ref is not None else
      "correctness: every sigpu result equals sigpu's CPU decode")
