"""FLAC decoding on the GPU or all CPU cores, bit-exact with libFLAC.

>>> pcm = sigpu.flac.decode("song.flac", device="cuda", dtype="float32")
>>> pcm.shape, pcm.sample_rate          # (samples, channels), Hz
>>> x = torch.from_dlpack(pcm)          # no copy; stays on the GPU
>>> for batch, meta in sigpu.flac.ClipLoader("corpus/", 5.0, 32):   # training clips
...     x = torch.from_dlpack(batch)    # (32, channels, samples) float32 on the GPU
"""

from ._sigpu.flac import Audio, Damage, Info, Report, decode, decode_batch, decode_clips, info

__all__ = ["Audio", "ClipLoader", "Damage", "Info", "Report", "decode", "decode_batch",
           "decode_clips", "info"]


def __getattr__(name):
    # ClipLoader is made on first use: a torch IterableDataset where torch imports, so that
    # importing sigpu neither needs torch nor pays for importing it.
    if name != "ClipLoader":
        raise AttributeError(f"module 'sigpu.flac' has no attribute {name!r}")
    from . import _clips

    try:
        from torch.utils.data import IterableDataset
    except ImportError:
        cls = _clips.ClipLoader
        cls.__module__ = __name__
    else:
        cls = _clips.torch_class(IterableDataset)
    globals()["ClipLoader"] = cls
    return cls
