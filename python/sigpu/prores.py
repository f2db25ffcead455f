"""Apple ProRes decoding (every profile, alpha, interlaced), bit-exact with FFmpeg.

>>> for frame in sigpu.prores.decode("clip.mov", device="cuda"):
...     y, cb, cr = (np.asarray(p) for p in frame.planes)     # uint16 (rows, width)
"""

from ._sigpu.prores import Frame, Frames, decode

__all__ = ["Frame", "Frames", "decode"]
