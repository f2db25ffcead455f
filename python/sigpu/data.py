"""Training data: random clips from a FLAC corpus, batched on the GPU.

>>> loader = sigpu.data.ClipLoader("corpus/", seconds=2.0, batch_size=32, device="cuda")
>>> for batch in loader:                  # sigpu.flac.Audio (32, samples, channels)
...     x = torch.from_dlpack(batch)      # no copy
"""

import os
import pathlib

import numpy as np

from . import flac

__all__ = ["ClipLoader", "find_flac"]


def find_flac(src):
    """The FLAC files of a folder (searched recursively, sorted), or the paths given."""
    if isinstance(src, (str, os.PathLike)) and pathlib.Path(src).is_dir():
        return sorted(str(p) for p in pathlib.Path(src).rglob("*.flac"))
    if isinstance(src, (str, os.PathLike)):
        return [os.fspath(src)]
    return [os.fspath(p) for p in src]


class ClipLoader:
    """An iterable of batches of random clips (a torch-style iterable dataset of batches,
    without needing torch).

    Each batch holds `batch_size` clips of `seconds` seconds from files drawn in proportion to
    their length (every second of the corpus equally likely), decoded with only the frames
    around each clip and delivered as one array (batch_size, samples, channels) on `device`.
    Epoch e of a loader with seed s draws the same clips every time. Files shorter than a clip,
    and files whose channel count or sample rate differ from the first file's, are left out
    (listed in `skipped`).
    """

    def __init__(self, files, *, seconds, batch_size, batches_per_epoch=None, device="auto",
                 dtype="float32", channels_first=False, seed=0):
        paths = find_flac(files)
        if not paths:
            raise ValueError("ClipLoader: no FLAC files")
        self.batch_size, self.device, self.dtype = int(batch_size), device, dtype
        self.channels_first, self.seed, self.epoch = channels_first, seed, 0
        self.files, lengths, self.skipped = [], [], []
        shape = None
        for p in paths:
            i = flac.info(p)
            if shape is None:
                shape = (i.sample_rate, i.channels)
                self.sample_rate, self.channels = shape
                self.length = int(round(seconds * self.sample_rate))
            if (i.sample_rate, i.channels) != shape or (i.total_samples or 0) < self.length:
                self.skipped.append(p)
                continue
            self.files.append(p)
            lengths.append(i.total_samples)
        if not self.files:
            raise ValueError(f"ClipLoader: no file holds {seconds} s at {shape[0]} Hz")
        self.lengths = np.array(lengths, np.int64)
        starts = self.lengths - self.length + 1
        self.weights = starts / starts.sum()
        total_clips = int(self.lengths.sum() // self.length)
        self.batches_per_epoch = batches_per_epoch or max(1, total_clips // self.batch_size)

    def __len__(self):
        return self.batches_per_epoch

    def __iter__(self):
        rng = np.random.default_rng([self.seed, self.epoch])
        self.epoch += 1
        for _ in range(self.batches_per_epoch):
            yield self.batch(rng)

    def batch(self, rng):
        """One batch of clips drawn with `rng` (a numpy Generator)."""
        which = rng.choice(len(self.files), size=self.batch_size, p=self.weights)
        starts = [int(rng.integers(0, self.lengths[i] - self.length + 1)) for i in which]
        return flac.decode_clips([self.files[i] for i in which], starts, length=self.length,
                                 device=self.device, dtype=self.dtype,
                                 channels_first=self.channels_first)
