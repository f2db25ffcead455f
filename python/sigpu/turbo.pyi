from typing import Any, Literal, Optional

from . import Array

class Decoded:
    bits: Array
    llrs: Optional[Array]
    iterations: list[int]
    backend: str
    seconds: float

def block_sizes() -> list[int]: ...
def encode(bits: Any) -> Array: ...
def channel(codewords: Any, *, ebn0_db: float, modulation: Literal["bpsk", "qpsk"] = "bpsk",
            seed: int = 1, first_frame: int = 0) -> Array: ...
def quantize(llrs: Any, *, frac_bits: int, dtype: Literal["int16", "int8"] = "int16") -> Array: ...
def decode(llrs: Any, *, device: str = "auto", iterations: int = 6, subdecoders: int = 1,
           algorithm: Literal["max-log-map", "log-map"] = "max-log-map", scaling: float = 0.75,
           sync: Literal["strict", "loose"] = "strict", early_termination: bool = False,
           output_llrs: bool = False) -> Decoded: ...
