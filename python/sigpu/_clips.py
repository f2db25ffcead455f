"""sigpu.flac.ClipLoader: batches of clips from a FLAC corpus for training (see flac.py)."""

import collections
import os
import pathlib
import queue
import threading

import numpy as np

from . import _sigpu


def find_flac(src):
    """The FLAC files of a folder (searched recursively, sorted), or the paths given."""
    if isinstance(src, (str, os.PathLike)) and pathlib.Path(src).is_dir():
        return sorted(str(p) for p in pathlib.Path(src).rglob("*") if p.suffix.lower() == ".flac")
    if isinstance(src, (str, os.PathLike)):
        return [os.fspath(src)]
    return [os.fspath(p) for p in src]


class ClipLoader:
    """Batches of clips from a corpus of FLAC files, for training.

    Iterating gives ``(batch, meta)``: ``batch`` a float32 ``sigpu.Array`` of shape
    ``(batch_size, channels, samples)`` on ``device`` (``torch.from_dlpack(batch)`` views it
    without a copy), ``meta`` a dict: ``files`` and ``starts`` (the clips' files and first
    samples), ``sample_rate``, ``epoch``, ``batch`` (its number in the epoch) and ``device``.

    files: a folder (searched recursively for ``*.flac``), a path, or a list of paths.
    clip_seconds: each clip's length (``round(clip_seconds * sample_rate)`` samples).
    sample_rate: the rate the batches have; None takes the first file's. Files at other rates are
        skipped (no resampling), as are files shorter than a clip and files that cannot be read;
        ``skipped`` maps each to the reason.
    channels: None takes the first file's count; 1 averages the channels of files with more.
        Files with another count are skipped (None and a mono first file: files with more).
    device: "cuda", "cuda:N" or "cpu": where clips are decoded (on the GPU, only the frames
        around each clip, found through the SEEKTABLE or a local frame search) and where the
        batch lives. devices: GPU indices (``[0, 1]``); batch n is decoded on, and lives on,
        ``devices[n % len(devices)]``, each device decoding on threads of its own.
    shuffle: True draws clips at random, every sample of the corpus equally likely to start one
        (a file's weight is its number of possible starts), ``len(loader)`` full batches per epoch
        (as many clips as the sweep has, at least one batch). False sweeps the corpus in order
        with non-overlapping clips (0, clip, 2 clip, ... in each file), the last batch possibly
        smaller.
    seed: epoch e draws the same clips for the same seed, files and arguments. Each ``iter()``
        is the next epoch; ``set_epoch(e)`` chooses one (as torch's DistributedSampler wants:
        under a DataLoader, whose workers iterate copies, call it every epoch).

    The next batch is decoded on a background thread while the consumer holds this one (the
    decoder releases the GIL); a ``break`` or a dropped iterator stops the thread. Files are
    memory-mapped, never read whole; the loader keeps the mappings of the last ``mapped_files``
    files it drew from (no descriptors stay open), so that batches do not map them again.

    With torch installed, the class is a ``torch.utils.data.IterableDataset``: under a
    ``DataLoader(loader, batch_size=None, num_workers=W)`` worker w takes batches w, w + W, ...
    of the epoch (disjoint shares of the same plan) and yields torch tensors (a ``sigpu.Array``
    cannot cross processes). Import does not need torch.
    """

    def __init__(self, files, clip_seconds, batch_size, *, sample_rate=None, channels=None,
                 device="cuda", devices=None, shuffle=True, seed=0, mapped_files=4096):
        paths = find_flac(files)
        if not paths:
            raise _sigpu.UsageError("ClipLoader: no FLAC files")
        if batch_size < 1 or clip_seconds <= 0:
            raise _sigpu.UsageError("ClipLoader: batch_size and clip_seconds must be positive")
        if devices is not None:
            devices = [int(d) for d in devices]
            if not devices or device == "cpu":
                raise _sigpu.UsageError("ClipLoader: devices= lists GPU indices (device='cuda')")
            self.devices = [f"cuda:{d}" for d in devices]
        else:
            self.devices = [device]
        self.batch_size, self.shuffle, self.seed, self.epoch = int(batch_size), shuffle, seed, 0
        self.sample_rate, self.channels = sample_rate, channels
        self.mapped_files = int(mapped_files)
        self._maps, self._maps_lock = collections.OrderedDict(), threading.Lock()
        self.downmix = channels == 1  # asked for, not taken from a mono first file
        self.files, lengths, self.skipped = [], [], {}
        for p in paths:
            try:
                i = _sigpu.flac.info(p)
            except _sigpu.Error as e:
                self.skipped[p] = str(e)
                continue
            if self.sample_rate is None:
                self.sample_rate = i.sample_rate
            if self.channels is None:
                self.channels = i.channels
            if i.sample_rate != self.sample_rate:
                self.skipped[p] = f"{i.sample_rate} Hz, not {self.sample_rate}"
            elif i.channels != self.channels and not self.downmix:
                self.skipped[p] = f"{i.channels} channels, not {self.channels}"
            elif not i.total_samples:
                self.skipped[p] = "no total sample count in STREAMINFO (needed for clips)"
            elif i.total_samples < round(clip_seconds * self.sample_rate):
                self.skipped[p] = f"{i.total_samples} samples, shorter than a clip"
            else:
                self.files.append(p)
                lengths.append(i.total_samples)
        if self.sample_rate is None:
            raise _sigpu.UsageError("ClipLoader: no readable FLAC file")
        self.clip_samples = int(round(clip_seconds * self.sample_rate))
        if not self.files:
            raise _sigpu.UsageError(f"ClipLoader: no file holds a {clip_seconds} s clip at "
                                    f"{self.sample_rate} Hz and {self.channels} channels")
        self.lengths = np.array(lengths, np.int64)
        self.clips_per_epoch = int((self.lengths // self.clip_samples).sum())
        starts = self.lengths - self.clip_samples + 1
        self._weights = starts / starts.sum()

    def __len__(self):
        if self.shuffle:
            return max(1, self.clips_per_epoch // self.batch_size)
        return -(-self.clips_per_epoch // self.batch_size)

    def set_epoch(self, epoch):
        """The epoch the next iter() gives (then counting on from it)."""
        self.epoch = int(epoch)

    def plan(self, epoch):
        """Epoch `epoch`'s clips, batch after batch: (file indices, start samples), int64
        arrays of len(self) * batch_size entries (fewer for the last batch of a sweep)."""
        if not self.shuffle:
            counts = self.lengths // self.clip_samples
            which = np.repeat(np.arange(len(self.files)), counts)
            first = np.cumsum(counts) - counts
            starts = (np.arange(counts.sum()) - np.repeat(first, counts)) * self.clip_samples
            return which, starts.astype(np.int64)
        rng = np.random.default_rng([self.seed, epoch])
        n = len(self) * self.batch_size
        which = rng.choice(len(self.files), size=n, p=self._weights)
        room = self.lengths[which] - self.clip_samples + 1
        return which, (rng.random(n) * room).astype(np.int64)

    def _mapped(self, which):
        """The files `which` (indices) as kept mappings, the least recently drawn let go beyond
        `mapped_files` (a batch's own are kept while it decodes: it holds them)."""
        with self._maps_lock:
            out = []
            for i in which:
                i = int(i)
                m = self._maps.get(i)
                if m is None:
                    m = self._maps[i] = _sigpu.MappedFile(self.files[i])
                else:
                    self._maps.move_to_end(i)
                out.append(m)
            while len(self._maps) > max(self.mapped_files, 0):
                self._maps.popitem(last=False)
            return out

    def decode(self, which, starts, device):
        """The batch of clips (file indices `which`, first samples `starts`) on `device`."""
        return _sigpu.flac.decode_clips(self._mapped(which), [int(s) for s in starts],
                                        length=self.clip_samples, device=device,
                                        dtype="float32", channels_first=True,
                                        mono=self.downmix)

    def __iter__(self):
        epoch = self.epoch
        self.epoch += 1
        which, starts = self.plan(epoch)
        batches = range(len(self))
        info = _worker_info()
        if info is not None:
            batches = batches[info.id::info.num_workers]
        return _prefetch(self, epoch, which, starts, batches, to_torch=info is not None)

    def __repr__(self):
        return (f"<sigpu.flac.ClipLoader {len(self.files)} files, {self.clip_samples} samples "
                f"at {self.sample_rate} Hz x {self.channels} ch, batches of {self.batch_size}, "
                f"{len(self.skipped)} skipped>")


def _worker_info():
    import sys

    torch = sys.modules.get("torch")  # a DataLoader worker has imported it
    return torch.utils.data.get_worker_info() if torch is not None else None


def _prefetch(loader, epoch, which, starts, batches, to_torch):
    """Yields (batch, meta) for `batches`, each decoded ahead on a thread of its device: batch n
    on devices[n % len(devices)], at most one finished batch waiting per thread. A GPU has two
    threads, so that one batch's windows are found on the host's cores while the GPU decodes
    the other's."""
    devices = loader.devices
    stop = threading.Event()
    per_device = 1 if devices == ["cpu"] else 2
    lanes = [queue.Queue(maxsize=1) for _ in range(per_device * len(devices))]
    order = list(batches)
    b = loader.batch_size

    def produce(lane):
        for k, n in enumerate(order):
            if k % len(lanes) != lane:
                continue
            device = devices[n % len(devices)]
            try:
                sel = slice(n * b, (n + 1) * b)
                batch = loader.decode(which[sel], starts[sel], device)
                if to_torch:
                    import torch

                    batch = torch.from_dlpack(batch)
                meta = {"files": [loader.files[i] for i in which[sel]],
                        "starts": starts[sel].copy(), "sample_rate": loader.sample_rate,
                        "epoch": epoch, "batch": n, "device": device}
                item = (True, (batch, meta))
            except BaseException as e:  # handed to the consumer, which raises it
                item = (False, e)
            while not stop.is_set():
                try:
                    lanes[lane].put(item, timeout=0.05)
                    break
                except queue.Full:
                    pass
            if stop.is_set() or not item[0]:
                return

    threads = [threading.Thread(target=produce, args=(i,), daemon=True,
                                name=f"sigpu-clips-{i}")
               for i in range(min(len(lanes), len(order)))]

    def consume():
        for t in threads:
            t.start()
        try:
            for k in range(len(order)):
                ok, item = lanes[k % len(lanes)].get()
                if not ok:
                    raise item
                yield item
        finally:
            stop.set()
            for lane in lanes:  # a producer blocked on a full lane sees `stop` and returns
                while not lane.empty():
                    lane.get_nowait()
            for t in threads:
                t.join()

    return consume()


def torch_class(base):
    """ClipLoader as a subclass of torch's IterableDataset (`base`)."""
    cls = type("ClipLoader", (ClipLoader, base), {"__doc__": ClipLoader.__doc__})
    cls.__module__ = "sigpu.flac"
    return cls
