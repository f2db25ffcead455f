import os
from typing import Iterable, Iterator, Union

import numpy as np

from .flac import Audio

def find_flac(src: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]]) -> list[str]: ...

class ClipLoader:
    files: list[str]
    skipped: list[str]
    sample_rate: int
    channels: int
    length: int
    batch_size: int
    batches_per_epoch: int
    def __init__(self, files: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]], *,
                 seconds: float, batch_size: int, batches_per_epoch: int | None = None,
                 device: str = "auto", dtype: str = "float32", channels_first: bool = False,
                 seed: int = 0) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[Audio]: ...
    def batch(self, rng: np.random.Generator) -> Audio: ...
