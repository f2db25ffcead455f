"""Shared fixtures: FLAC files made with the reference encoder (the `flac` CLI) from PCM the
tests know, so that every decode is checked against an independent oracle."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import sigpu


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def has_gpu():
    return sigpu.cuda_compiled() and len(sigpu.cuda_devices()) > 0


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="no CUDA device (or a build without CUDA)")
    for item in items:
        if "gpu" in item.keywords and not has_gpu():
            item.add_marker(skip)


def flac_cli():
    path = os.environ.get("SIGPU_FLAC_CLI") or shutil.which("flac")
    if not path:
        pytest.skip("the flac command-line encoder is not installed")
    return path


def raw_bytes(pcm, bits):
    """pcm: int (samples, channels) -> little-endian signed `bits`-bit interleaved bytes."""
    return np.frombuffer(pcm.astype("<i4").tobytes(), np.uint8).reshape(-1, 4)[:, :bits // 8].tobytes()


def decode_with_flac_cli(path, channels, bits):
    """The reference decoder's PCM (`flac -d` to raw samples) as int32 (samples, channels)."""
    raw = subprocess.run([flac_cli(), "-s", "-d", "-c", "--force-raw-format", "--endian=little",
                          "--sign=signed", str(path)], check=True, capture_output=True).stdout
    width = bits // 8
    b = np.frombuffer(raw, np.uint8).reshape(-1, width)
    wide = np.zeros((b.shape[0], 4), np.uint8)
    wide[:, 4 - width:] = b
    return (wide.view("<i4")[:, 0] >> (32 - 8 * width)).reshape(-1, channels)


def test_signal(samples, channels, bits, seed=1):
    """Tones plus noise, every bit of the sample width in use."""
    rng = np.random.default_rng(seed)
    t = np.arange(samples)[:, None]
    full = 2 ** (bits - 1)
    tone = 0.5 * np.sin(2 * np.pi * t * (220 + 110 * np.arange(channels)) / 44100)
    noise = rng.normal(0, 0.05, (samples, channels))
    return np.clip(np.round((tone + noise) * full), -full, full - 1).astype(np.int32)


@pytest.fixture(scope="session")
def make_flac(tmp_path_factory):
    """make_flac(samples, channels, bits, rate) -> (path, pcm): a FLAC file and its PCM."""
    folder = tmp_path_factory.mktemp("flac")
    made = {}

    def make(samples=44100, channels=2, bits=16, rate=44100, seed=1, extra=()):
        key = (samples, channels, bits, rate, seed, tuple(extra))
        if key not in made:
            pcm = test_signal(samples, channels, bits, seed)
            name = "x".join(map(str, key[:5])) + "".join(extra).replace("-", "_")
            out = folder / f"{name}.flac"
            subprocess.run([flac_cli(), "-s", "-f", "--force-raw-format", "--endian=little",
                            "--sign=signed", f"--channels={channels}", f"--bps={bits}",
                            f"--sample-rate={rate}", *extra, "-o", str(out), "-"],
                           input=raw_bytes(pcm, bits), check=True)
            made[key] = (out, pcm)
        return made[key]

    return make
