import os
from typing import Any, Iterable, Iterator, Literal, Optional, Sequence, Union

import numpy as np

from . import Array

Source = Union[str, os.PathLike, bytes, bytearray, memoryview, Any]
Device = str  # "auto", "cpu", "cuda", "cuda:N"
Dtype = Literal["int16", "int32", "float32"]

class Damage:
    byte_offset: int
    byte_length: int
    frame_number: int
    first_sample: int
    samples: int
    what: str
    message: str

class Report:
    backend: str
    frames: int
    damage: list[Damage]
    md5: Literal["match", "mismatch", "not_set", "skipped"]
    warnings: list[str]
    ok: bool

class Audio(Array):
    sample_rate: int
    channels: int
    bits_per_sample: int
    samples: int
    report: Report

class Info:
    sample_rate: int
    channels: int
    bits_per_sample: int
    total_samples: Optional[int]
    duration: Optional[float]
    md5: Optional[str]
    has_streaminfo: bool
    vendor: str
    comments: list[str]
    audio_offset: int

def info(src: Source) -> Info: ...
def decode(src: Source, *, device: Device = "auto", dtype: Dtype = "float32",
           start: Optional[int] = None, stop: Optional[int] = None, channels_first: bool = False,
           verify: bool = True, strict: bool = False) -> Audio: ...
def decode_batch(srcs: Iterable[Source], *, device: Device = "auto", dtype: Dtype = "float32",
                 channels_first: bool = False, verify: bool = True,
                 strict: bool = False) -> list[Audio]: ...
def decode_clips(srcs: Sequence[Source], starts: Sequence[int], *, length: int,
                 device: Device = "auto", dtype: Dtype = "float32",
                 channels_first: bool = False, mono: bool = False) -> Audio: ...

class ClipLoader:
    files: list[str]
    skipped: dict[str, str]
    sample_rate: int
    channels: int
    downmix: bool
    clip_samples: int
    clips_per_epoch: int
    batch_size: int
    devices: list[str]
    shuffle: bool
    seed: int
    epoch: int
    mapped_files: int
    def __init__(self, files: Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]],
                 clip_seconds: float, batch_size: int, *, sample_rate: Optional[int] = None,
                 channels: Optional[int] = None, device: Device = "cuda",
                 devices: Optional[Sequence[int]] = None, shuffle: bool = True,
                 seed: int = 0, mapped_files: int = 4096) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[tuple[Audio, dict[str, Any]]]: ...
    def set_epoch(self, epoch: int) -> None: ...
    def plan(self, epoch: int) -> tuple[np.ndarray, np.ndarray]: ...
    def decode(self, which: Sequence[int], starts: Sequence[int], device: Device) -> Audio: ...
