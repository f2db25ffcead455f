"""FLAC decoding on the GPU or all CPU cores, bit-exact with libFLAC.

>>> pcm = sigpu.flac.decode("song.flac", device="cuda", dtype="float32")
>>> pcm.shape, pcm.sample_rate          # (samples, channels), Hz
>>> x = torch.from_dlpack(pcm)          # no copy; stays on the GPU
"""

from ._sigpu.flac import Audio, Damage, Info, Report, decode, decode_batch, decode_clips, info

__all__ = ["Audio", "Damage", "Info", "Report", "decode", "decode_batch", "decode_clips", "info"]
