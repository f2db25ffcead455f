"""A real-time signal graph of audio effects (docs/audio.md) on the CPU or the GPU.

>>> eng = sigpu.audio.Engine("examples/audio/guitar.json", device="cuda", period=128)
>>> out = eng.process(block)            # (inputs, frames) float32 -> (outputs, frames)
>>> eng.update("eq", "band.1.gain_db", 3.0)
"""

from ._sigpu.audio import Engine

__all__ = ["Engine"]
