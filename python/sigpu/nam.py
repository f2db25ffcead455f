"""Neural Amp Modeler (.nam) models, run on the CPU or on the GPU, many instances at once.

>>> model = sigpu.nam.Model("amp.nam")
>>> y = sigpu.nam.Processor(model, sample_rate=48000).process(x)     # x: float32 (frames,)
>>> ys = sigpu.nam.Batch([model] * 64, device="cuda").process(xs)    # (64, frames)
"""

from ._sigpu.nam import Batch, Model, Processor

__all__ = ["Batch", "Model", "Processor"]
