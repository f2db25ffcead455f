"""HEVC (H.265) intra decoding (Main, Main 10), with the in-loop filters on the GPU.

>>> for frame in sigpu.hevc.decode("clip.mp4", device="cuda"):
...     y = np.asarray(frame.planes[0])          # uint16 (height, width)
"""

from ._sigpu.hevc import Frame, Frames, decode

__all__ = ["Frame", "Frames", "decode"]
