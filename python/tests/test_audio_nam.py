"""sigpu.audio and sigpu.nam from Python: exact results where the math is exact (a gain of
-6.02 dB halves, a 0 dB gain passes through), streaming equals one piece, CPU == GPU within a
tolerance, and NeuralAmpModelerCore's models from the shared fixtures folder ($SIGPU_FIXTURES_DIR,
else ../shared/fixtures beside the source tree; the tests that need them skip where absent)."""

import os
import pathlib

import numpy as np
import pytest

import sigpu

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = os.environ.get("SIGPU_FIXTURES_DIR") or ROOT.parent / "shared" / "fixtures"
NAM = pathlib.Path(FIXTURES) / "nam"
TINY = ROOT / "examples" / "audio" / "models" / "tiny-wavenet.nam"


def gain_graph(db, channels=2):
    return {"inputs": channels,
            "nodes": [{"id": "g", "type": "gain", "input": "in", "params": {"gain_db": db}}],
            "outputs": "g"}


def test_gain_graph_is_exact():
    audio = pytest.importorskip("sigpu.audio")
    eng = audio.Engine(gain_graph(0.0), device="cpu", period=64, sample_rate=48000)
    assert (eng.inputs, eng.outputs, eng.period, eng.backend) == (2, 2, 64, "cpu")
    x = np.random.default_rng(1).uniform(-1, 1, (2, 64 * 10)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(eng.process(x)), x)
    half = audio.Engine(gain_graph(20 * np.log10(0.5)), device="cpu", period=64)
    np.testing.assert_allclose(np.asarray(half.process(x)), x * 0.5, rtol=1e-6)


def test_graph_sources_and_errors(tmp_path):
    audio = pytest.importorskip("sigpu.audio")
    import json

    path = tmp_path / "g.json"
    path.write_text(json.dumps(gain_graph(0.0, channels=1)))
    for src in (path, str(path), path.read_text()):
        assert audio.Engine(src, device="cpu").inputs == 1
    eng = audio.Engine(path, device="cpu", period=32)
    with pytest.raises(sigpu.UsageError, match="multiple of the period"):
        eng.process(np.zeros((1, 33), np.float32))
    with pytest.raises(sigpu.UsageError, match="channels"):
        eng.process(np.zeros((2, 32), np.float32))
    with pytest.raises(sigpu.InputError, match="nosuch"):
        audio.Engine({"inputs": 1, "nodes": [{"id": "a", "type": "nosuch", "input": "in"}],
                      "outputs": "a"}, device="cpu")
    eng.update("g", "gain_db", -6.0)
    with pytest.raises(sigpu.Error, match="gain_db"):
        eng.update("g", "gain_db", 1000.0)


def test_example_graph_streams():
    audio = pytest.importorskip("sigpu.audio")
    graph = ROOT / "examples" / "audio" / "guitar.json"
    x = np.random.default_rng(2).normal(0, 0.1, (1, 128 * 16)).astype(np.float32)
    one = audio.Engine(graph, device="cpu", period=128)
    if one.inputs != 1:
        x = np.repeat(x, one.inputs, axis=0)
    whole = np.asarray(one.process(x))
    pieces = audio.Engine(graph, device="cpu", period=128)
    parts = [np.asarray(pieces.process(x[:, i:i + 512])) for i in range(0, x.shape[1], 512)]
    np.testing.assert_array_equal(np.concatenate(parts, axis=1), whole)


def test_nam_models():
    nam = pytest.importorskip("sigpu.nam")
    if not NAM.is_dir():
        pytest.skip(f"NAM fixtures absent: {NAM} (set SIGPU_FIXTURES_DIR)")
    m = nam.Model(NAM / "wavenet.nam")
    assert m.architecture == "WaveNet" and m.sample_rate == 48000 and m.receptive_field > 0
    x = np.random.default_rng(3).normal(0, 0.2, 4800).astype(np.float32)
    y = np.asarray(nam.Processor(m).process(x))
    assert y.shape == x.shape and y.dtype == np.float32 and np.isfinite(y).all() and y.any()
    # Streaming: the same signal in pieces gives the same samples.
    p = nam.Processor(m, max_frames=100)
    parts = np.concatenate([np.asarray(p.process(x[i:i + 333])) for i in range(0, len(x), 333)])
    np.testing.assert_array_equal(parts, y)
    lstm = nam.Model(NAM / "lstm.nam")
    batch = nam.Batch([m, m, lstm], device="cpu",
                      max_frames=256)
    xs = np.stack([x, x, x])
    ys = np.asarray(batch.process(xs))
    np.testing.assert_array_equal(ys[0], y)
    np.testing.assert_array_equal(ys[1], y)
    with pytest.raises(sigpu.Error, match="missing.nam"):
        nam.Model(NAM / "missing.nam")
    with pytest.raises(sigpu.Error, match="48000"):
        nam.Processor(m, sample_rate=44100)


@pytest.mark.gpu
def test_gpu_audio_matches_cpu():
    audio = pytest.importorskip("sigpu.audio")
    graph = ROOT / "examples" / "audio" / "guitar.json"
    cpu = audio.Engine(graph, device="cpu", period=128)
    gpu = audio.Engine(graph, device="cuda", period=128)
    assert gpu.backend == "cuda"
    x = np.random.default_rng(4).normal(0, 0.1, (cpu.inputs, 128 * 32)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(gpu.process(x)), np.asarray(cpu.process(x)),
                               atol=1e-4)


@pytest.mark.gpu
def test_gpu_nam_batch_matches_cpu():
    nam = pytest.importorskip("sigpu.nam")
    m = nam.Model(TINY)
    x = np.random.default_rng(5).normal(0, 0.2, (4, 1024)).astype(np.float32)
    cpu = np.asarray(nam.Batch([m] * 4, device="cpu").process(x))
    gpu = np.asarray(nam.Batch([m] * 4, device="cuda").process(x))
    np.testing.assert_allclose(gpu, cpu, atol=1e-4)
