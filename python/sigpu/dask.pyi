import os
from typing import Any, Iterable, Literal, Optional, Union

Files = Union[str, os.PathLike, Iterable[Union[str, os.PathLike]]]

def process_file(path: str, output: Optional[str] = None, *, format: Literal["wav", "npy"] = "wav",
                 dtype: Optional[str] = None, device: str = "cpu",
                 devices: Optional[dict[str, str]] = None,
                 overwrite: bool = False) -> dict[str, Any]: ...
def worker_devices(client: Any) -> dict[str, str]: ...
def decode_corpus(client: Any, files: Files, out_dir: Union[str, os.PathLike], *,
                  format: Literal["wav", "npy"] = "wav", dtype: Optional[str] = None,
                  device: str = "cpu", overwrite: bool = False,
                  root: Optional[Union[str, os.PathLike]] = None) -> list[dict[str, Any]]: ...
def verify(client: Any, files: Files, *, device: str = "cpu") -> list[dict[str, Any]]: ...
