"""Corpus jobs on Dask distributed: FLAC files decoded to WAV or NumPy files, or checked, one task
per file over a cluster's workers, one GPU per worker where workers have GPUs.

>>> from dask.distributed import Client, LocalCluster
>>> with LocalCluster(n_workers=4) as cluster, Client(cluster) as client:
...     records = sigpu.dask.decode_corpus(client, "corpus/", "wav/", device="cuda")
>>> [r for r in records if not r["ok"]]

Any `distributed` cluster works (LocalCluster, dask-jobqueue's SLURMCluster, dask-cuda); the
output folder must be one every worker sees. Importing this module does not import dask.
"""

import math
import os
import pathlib
import socket
import time
import wave

import numpy as np

from . import _sigpu
from ._clips import find_flac

__all__ = ["decode_corpus", "process_file", "verify", "worker_devices"]

EXTENSIONS = {"wav": ".wav", "npy": ".npy"}
_CHUNK = 1 << 20  # samples per statistics pass, so no float64 copy of a long file is made


def _stats(pcm):
    """Peak and RMS of int32 full-scale PCM, as fractions of full scale."""
    peak, squares = 0, 0.0
    for b in range(0, pcm.shape[0], _CHUNK):
        x = pcm[b:b + _CHUNK]
        if x.size:
            peak = max(peak, int(x.max()), -int(x.min()))
            squares += float(np.square(x, dtype=np.float64).sum())
    full = float(1 << 31)
    return peak / full, math.sqrt(squares / max(1, pcm.size)) / full


def _wav_width(bits, dtype):
    if dtype is None:
        return (bits + 7) // 8
    widths = {"int16": 2, "int32": 4}
    if dtype not in widths:
        raise _sigpu.UsageError(f"WAV output takes dtype None (the stream's width), 'int16' or "
                                f"'int32', not {dtype!r}; float32 is written as npy")
    return widths[dtype]


def _write_wav(tmp, pcm, rate, width):
    """int32 full-scale PCM as `width`-byte PCM WAV (8-bit unsigned, as WAV has it)."""
    v = pcm >> (32 - 8 * width)
    if width == 1:
        data = (v + 128).astype(np.uint8)
    elif width == 3:
        data = np.ascontiguousarray(v.astype("<i4").view(np.uint8).reshape(-1, 4)[:, :3])
    else:
        data = v.astype(f"<i{width}")
    if data.nbytes > 0xFFFFFFFF - 36:
        raise _sigpu.UsageError("too long for a WAV file (4 GiB); write npy")
    with wave.open(tmp, "wb") as w:
        w.setnchannels(pcm.shape[1])
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(data.tobytes())


def _write_npy(tmp, pcm, dtype):
    dtype = dtype or "float32"
    if dtype == "float32":
        data = (pcm * np.float32(2.0 ** -31)).astype(np.float32)
    elif dtype == "int16":
        data = (pcm >> 16).astype(np.int16)
    elif dtype == "int32":
        data = pcm
    else:
        raise _sigpu.UsageError(f"dtype must be 'int16', 'int32' or 'float32', not {dtype!r}")
    with open(tmp, "wb") as f:
        np.save(f, data)


def process_file(path, output=None, *, format="wav", dtype=None, device="cpu", devices=None,
                 overwrite=False):
    """Decodes one FLAC file and checks it (damage, STREAMINFO MD5); with `output`, writes it
    there. Never raises for the file's sake: returns a record (dict) with path, output, ok,
    error (None or the message), seconds (of audio), samples, sample_rate, channels,
    bits_per_sample, peak and rms (fractions of full scale, over all channels), md5 ("match",
    "mismatch", "not_set"), md5_ok (None when not set), damage (messages), device, worker and
    elapsed (wall seconds). A damaged file or an MD5 mismatch is not ok and is not written.

    devices: {worker address: device} (worker_devices), for the worker this runs on."""
    t0 = time.perf_counter()
    worker = None
    if devices:
        from distributed import get_worker

        worker = get_worker().address
        device = devices.get(worker, device)
    rec = {"path": path, "output": output, "ok": False, "error": None, "seconds": None,
           "samples": 0, "sample_rate": 0, "channels": 0, "bits_per_sample": 0, "peak": None,
           "rms": None, "md5": None, "md5_ok": None, "damage": [], "device": device,
           "worker": worker, "elapsed": 0.0}
    try:
        if worker is None:
            try:
                from distributed import get_worker

                rec["worker"] = get_worker().address
            except (ImportError, ValueError):
                pass
        if output is not None and os.path.exists(output) and not overwrite:
            raise _sigpu.UsageError(f"{output} exists (overwrite=False)")
        # int32 holds every bit of every FLAC sample width: the MD5 is checked on it.
        a = _sigpu.flac.decode(path, device=device, dtype="int32", verify=True)
        pcm = a.numpy() if a.device != "cpu" else np.asarray(a)
        r = a.report
        rec.update(samples=a.samples, sample_rate=a.sample_rate, channels=a.channels,
                   bits_per_sample=a.bits_per_sample, md5=r.md5,
                   md5_ok={"match": True, "mismatch": False}.get(r.md5),
                   damage=[d.message for d in r.damage],
                   seconds=a.samples / a.sample_rate if a.sample_rate else None)
        rec["peak"], rec["rms"] = _stats(pcm)
        if r.damage or r.md5 == "mismatch":
            what = f"{len(r.damage)} damaged frame(s)" if r.damage else "MD5 mismatch"
            raise _sigpu.InputError(f"{path}: {what}; not written")
        if output is not None:
            os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
            tmp = f"{output}.partial-{os.getpid()}"
            try:
                if format == "wav":
                    _write_wav(tmp, pcm, a.sample_rate, _wav_width(a.bits_per_sample, dtype))
                else:
                    _write_npy(tmp, pcm, dtype)
                if os.path.exists(output) and not overwrite:
                    raise _sigpu.UsageError(f"{output} exists (overwrite=False)")
                os.replace(tmp, output)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        rec["ok"] = True
    except Exception as e:  # the record carries it; the job goes on
        rec["error"] = str(e) or type(e).__name__
    rec["elapsed"] = time.perf_counter() - t0
    return rec


def _worker_gpus():
    n = len(_sigpu.cuda_devices()) if _sigpu.cuda_compiled() else 0
    return socket.gethostname(), n, os.environ.get("CUDA_VISIBLE_DEVICES")


def worker_devices(client):
    """{worker address: "cuda:N"}: one GPU per worker. On each host the workers, sorted by
    address, take devices 0, 1, ... in turn (more workers than GPUs share them round-robin).
    Workers that each see their own GPU first (CUDA_VISIBLE_DEVICES differing in its first
    entry, as dask-cuda starts them) are already pinned and take "cuda:0"."""
    seen = client.run(_worker_gpus)
    hosts = {}
    for address, (host, n, visible) in seen.items():
        hosts.setdefault(host, []).append((address, n, visible))
    out = {}
    for workers in hosts.values():
        firsts = {v.split(",")[0] for _, _, v in workers if v}
        pinned = len(firsts) == len(workers)
        for rank, (address, n, _) in enumerate(sorted(workers)):
            out[address] = "cuda:0" if pinned else f"cuda:{rank % max(1, n)}"
    return out


def _run(client, jobs, device, **kw):
    """process_file over `jobs` (path, output) on the cluster; a failed file runs once more, on
    another worker where there is one. Records in the jobs' order, each with `attempts` and
    `workers` (the worker of each attempt; None where it died)."""
    from distributed import as_completed

    devices = worker_devices(client) if device == "cuda" else None
    workers = list(client.scheduler_info()["workers"])
    records = [None] * len(jobs)
    tried = [[] for _ in jobs]

    def submit(i, avoid=None):
        others = [w for w in workers if w != avoid] if avoid else None
        path, output = jobs[i]
        return client.submit(process_file, path, output, device=device, devices=devices,
                             workers=others or None, allow_other_workers=bool(others),
                             pure=False, **kw)

    which = {}
    pending = []
    for i in range(len(jobs)):
        f = submit(i)
        which[f.key] = i
        pending.append(f)
    done = as_completed(pending)
    for f in done:
        i = which.pop(f.key)
        if f.status == "finished":
            rec = f.result()
        else:  # the task itself failed: a worker died, the package is missing on it, ...
            e = f.exception()
            rec = {"path": jobs[i][0], "output": jobs[i][1], "ok": False,
                   "error": f"{type(e).__name__}: {e}", "worker": None}
        f.release()
        tried[i].append(rec.get("worker"))
        if not rec["ok"] and len(tried[i]) < 2:
            again = submit(i, avoid=rec.get("worker"))
            which[again.key] = i
            done.add(again)
            continue
        rec["attempts"], rec["workers"] = len(tried[i]), tried[i]
        records[i] = rec
    return records


def _with_client(client, fn):
    if client is not None:
        return fn(client)
    from distributed import Client, LocalCluster

    with LocalCluster(processes=True, dashboard_address=None) as cluster, Client(cluster) as own:
        return fn(own)


def _refused(path, output, why):
    return {"path": path, "output": output, "ok": False, "error": why, "attempts": 0,
            "workers": []}


def decode_corpus(client, files, out_dir, *, format="wav", dtype=None, device="cpu",
                  overwrite=False, root=None):
    """Decodes every FLAC file of `files` (a folder, searched recursively, or a list of paths)
    into `out_dir`, one task per file on the Dask cluster of `client` (None: a LocalCluster for
    the call), and returns one record per file (process_file's, plus `attempts` and `workers`),
    in order.

    Outputs keep the inputs' layout relative to `root` (default: the folder given, else the
    inputs' common folder), with the format's extension. format: "wav" (PCM at the stream's
    width, or dtype "int16"/"int32") or "npy" (an array (samples, channels); dtype "float32"
    (default), "int16" or "int32" as sigpu.flac.decode gives them). An output that exists is
    refused unless `overwrite`, one that would be an input always; refused files are records
    with attempts 0. A file that fails is tried once more on another worker; every failure is a
    record, never a stopped job. device: "cpu", "cuda" (each worker its own GPU, see
    worker_devices) or "cuda:N" (every worker that device).
    """
    if format not in EXTENSIONS:
        raise _sigpu.UsageError(f"format must be 'wav' or 'npy', not {format!r}")
    if format == "wav":
        _wav_width(16, dtype)  # a bad dtype is refused before any task runs
    paths = find_flac(files)
    if root is None:
        if isinstance(files, (str, os.PathLike)) and pathlib.Path(files).is_dir():
            root = files
        else:
            root = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths]) \
                if paths else "."
    root = os.path.abspath(root)
    inputs = {os.path.realpath(p) for p in paths}
    jobs, records, taken = [], [None] * len(paths), {}
    for i, p in enumerate(paths):
        rel = os.path.relpath(os.path.abspath(p), root)
        if rel.startswith(".."):
            raise _sigpu.UsageError(f"{p} is not under root {root}")
        out = os.path.join(os.path.abspath(out_dir), os.path.splitext(rel)[0] + EXTENSIONS[format])
        real = os.path.realpath(out)
        if real in inputs:
            records[i] = _refused(p, out, f"{out} would overwrite an input")
        elif real in taken:
            records[i] = _refused(p, out, f"{out} is also the output of {taken[real]}")
        elif os.path.exists(out) and not overwrite:
            records[i] = _refused(p, out, f"{out} exists (overwrite=False)")
        else:
            taken[real] = p
            jobs.append((i, p, out))

    def work(c):
        return _run(c, [(p, out) for _, p, out in jobs], device, format=format, dtype=dtype,
                    overwrite=overwrite)

    for (i, _, _), rec in zip(jobs, _with_client(client, work) if jobs else []):
        records[i] = rec
    return records


def verify(client, files, *, device="cpu"):
    """Decodes and checks every FLAC file of `files` (a folder or a list) on the cluster,
    writing nothing: per-file records as decode_corpus gives them (duration, peak, RMS, damage,
    MD5), in order."""
    paths = find_flac(files)
    jobs = [(p, None) for p in paths]
    return _with_client(client, lambda c: _run(c, jobs, device)) if jobs else []
