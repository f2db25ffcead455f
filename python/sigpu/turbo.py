"""LTE turbo coding (3GPP TS 36.212): encoder, AWGN channel, iterative decoder.

>>> cw = sigpu.turbo.encode(bits)                        # (B, K) 0/1 -> (B, 3 (K + 4))
>>> llr = sigpu.turbo.channel(cw, ebn0_db=1.0)           # float32 LLRs, log P(0)/P(1)
>>> out = sigpu.turbo.decode(llr, device="cuda", subdecoders=64)
>>> (np.asarray(out.bits) != bits).mean()
"""

from ._sigpu.turbo import Decoded, block_sizes, channel, decode, encode, quantize

__all__ = ["Decoded", "block_sizes", "channel", "decode", "encode", "quantize"]
