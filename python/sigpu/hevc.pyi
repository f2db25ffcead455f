import os
from typing import Any, Iterator, Union

from . import Array

class Frame:
    width: int
    height: int
    bit_depth: int
    poc: int
    decode_index: int
    filtered: bool
    hash: str
    planes: list[Array]

class Frames(Iterator[Frame]):
    def __next__(self) -> Frame: ...
    problems: list[str]
    format: str

def decode(src: Union[str, os.PathLike, bytes, Any], *, device: str = "cpu",
           unfiltered: bool = False, check_hash: bool = True,
           frames_on_device: bool = False) -> Frames: ...
