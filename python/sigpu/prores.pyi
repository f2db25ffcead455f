import os
from typing import Any, Iterator, Optional, Union

from . import Array

class Frame:
    index: int
    width: int
    height: int
    format: str
    scan: str
    planes: list[Array]

class Frames(Iterator[Frame]):
    def __next__(self) -> Frame: ...
    def __len__(self) -> int: ...
    width: int
    height: int
    fourcc: str
    frame_rate: Optional[float]
    damage: list[str]

def decode(src: Union[str, os.PathLike, bytes, Any], *, device: str = "auto", bit_depth: int = 0,
           batch: int = 16, strict: bool = False) -> Frames: ...
