import os
from typing import Any, Union

from . import Array

class Engine:
    def __init__(self, graph: Union[str, os.PathLike, dict[str, Any]], *, device: str = "auto",
                 period: int = 128, sample_rate: float = 48000.0, threads: int = 0,
                 variables: dict[str, int] = ...) -> None: ...
    def process(self, block: Any) -> Array: ...
    def update(self, node: str, param: str, value: float) -> None: ...
    inputs: int
    outputs: int
    period: int
    sample_rate: float
    backend: str
    nodes: list[str]
