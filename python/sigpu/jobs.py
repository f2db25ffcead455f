"""Corpus jobs on Dask: a folder of FLAC files decoded and verified in parallel, on a
LocalCluster or any distributed cluster.

>>> from dask.distributed import Client, LocalCluster
>>> with Client(LocalCluster(n_workers=4)) as client:
...     report = sigpu.jobs.verify("corpus/", client=client)
>>> [r for r in report if not r["ok"]]
"""

from . import data

__all__ = ["verify", "verify_file"]


def verify_file(path, device="cpu"):
    """Decodes one file and checks it (damage, STREAMINFO MD5): a dict with path, ok, md5,
    frames, samples, sample_rate, channels, damage (messages) and error (None or the message)."""
    from . import Error, flac

    out = {"path": path, "ok": False, "md5": None, "frames": 0, "samples": 0, "sample_rate": 0,
           "channels": 0, "damage": [], "error": None}
    try:
        # int32 holds every bit of every FLAC sample width, so the MD5 can be checked.
        a = flac.decode(path, device=device, dtype="int32")
    except Error as e:
        out["error"] = str(e)
        return out
    r = a.report
    out.update(ok=r.ok, md5=r.md5, frames=r.frames, samples=a.samples,
               sample_rate=a.sample_rate, channels=a.channels,
               damage=[d.message for d in r.damage])
    return out


def verify(files, *, client=None, device="cpu"):
    """verify_file for every FLAC file of a folder (recursively) or list, in parallel on the Dask
    cluster of `client` (None: a LocalCluster made for the call). Results are in the files'
    order."""
    paths = data.find_flac(files)
    if client is None:
        from dask.distributed import Client, LocalCluster

        with LocalCluster(processes=True) as cluster, Client(cluster) as own:
            return verify(paths, client=own, device=device)
    futures = client.map(verify_file, paths, device=device, pure=False)
    return client.gather(futures)
