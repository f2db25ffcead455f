"""sigpu.turbo: the encoder against a NumPy model of 36.212's constituent encoder, decoding of
noiseless and noisy codewords, fixed point, and CPU == GPU in strict mode."""

import numpy as np
import pytest

import sigpu

pytest.importorskip("sigpu.turbo", reason="a build without the turbo module")


def rsc(bits):
    """36.212 5.1.3.2.1: the parity of the first constituent encoder (g0 = 1 + D^2 + D^3
    feedback, g1 = 1 + D + D^3), K bits without the tail."""
    s = [0, 0, 0]
    out = []
    for u in bits:
        a = u ^ s[1] ^ s[2]
        out.append(a ^ s[0] ^ s[2])
        s = [a, s[0], s[1]]
    return np.array(out, np.uint8)


def random_bits(blocks, K, seed=7):
    return np.random.default_rng(seed).integers(0, 2, (blocks, K), dtype=np.uint8)


def test_encoder_matches_the_standard():
    K = 40
    bits = random_bits(3, K)
    cw = np.asarray(sigpu.turbo.encode(bits))
    assert cw.shape == (3, 3 * (K + 4)) and cw.dtype == np.uint8
    for b in range(3):
        d0, d1 = cw[b, :K + 4], cw[b, K + 4:2 * (K + 4)]
        np.testing.assert_array_equal(d0[:K], bits[b])  # systematic
        np.testing.assert_array_equal(d1[:K], rsc(bits[b]))
    one = np.asarray(sigpu.turbo.encode(bits[0]))
    np.testing.assert_array_equal(one, cw[0])
    assert 6144 in sigpu.turbo.block_sizes() and len(sigpu.turbo.block_sizes()) == 188


def test_noiseless_and_noisy_decoding():
    K = 1024
    bits = random_bits(8, K)
    cw = np.asarray(sigpu.turbo.encode(bits))
    clean = np.where(cw == 0, 4.0, -4.0).astype(np.float32)
    out = sigpu.turbo.decode(clean, device="cpu")
    np.testing.assert_array_equal(np.asarray(out.bits), bits)
    llr = sigpu.turbo.channel(cw, ebn0_db=3.0, seed=3)
    assert llr.dtype == "float32" and llr.shape == cw.shape
    out = sigpu.turbo.decode(llr, device="cpu", iterations=8, output_llrs=True)
    np.testing.assert_array_equal(np.asarray(out.bits), bits)
    post = np.asarray(out.llrs)
    assert post.shape == (8, K) and ((post < 0) == (bits == 1)).all()
    assert out.backend == "cpu-parallel" and len(out.iterations) == 8


def test_channel_is_deterministic_per_frame():
    cw = np.asarray(sigpu.turbo.encode(random_bits(4, 40)))
    a = np.asarray(sigpu.turbo.channel(cw, ebn0_db=0.0, seed=5))
    b = np.asarray(sigpu.turbo.channel(cw[2:], ebn0_db=0.0, seed=5, first_frame=2))
    np.testing.assert_array_equal(a[2:], b)


def test_fixed_point_and_log_map():
    K = 512
    bits = random_bits(4, K, seed=2)
    llr = sigpu.turbo.channel(sigpu.turbo.encode(bits), ebn0_db=2.5, seed=9)
    for dtype in ("int16", "int8"):
        q = sigpu.turbo.quantize(llr, frac_bits=2 if dtype == "int8" else 6, dtype=dtype)
        assert q.dtype == dtype
        out = sigpu.turbo.decode(q, device="cpu", iterations=8)
        np.testing.assert_array_equal(np.asarray(out.bits), bits)
    out = sigpu.turbo.decode(llr, device="cpu", algorithm="log-map")
    np.testing.assert_array_equal(np.asarray(out.bits), bits)


def test_errors():
    with pytest.raises(sigpu.Error, match="41"):
        sigpu.turbo.encode(np.zeros(41, np.uint8))
    with pytest.raises(sigpu.UsageError):
        sigpu.turbo.decode(np.zeros(100, np.float32))
    with pytest.raises(sigpu.UsageError, match="float64"):
        sigpu.turbo.decode(np.zeros(132, np.float64))
    with pytest.raises(sigpu.UsageError, match="modulation"):
        sigpu.turbo.channel(np.zeros(132, np.uint8), ebn0_db=1, modulation="8psk")


@pytest.mark.gpu
def test_gpu_strict_matches_cpu():
    K = 6144
    bits = random_bits(16, K, seed=4)
    llr = sigpu.turbo.channel(sigpu.turbo.encode(bits), ebn0_db=0.8, seed=1)
    cpu = sigpu.turbo.decode(llr, device="cpu", subdecoders=64)
    gpu = sigpu.turbo.decode(llr, device="cuda", subdecoders=64)
    assert gpu.backend == "cuda"
    np.testing.assert_array_equal(np.asarray(gpu.bits), np.asarray(cpu.bits))


@pytest.mark.gpu
def test_gpu_llrs_from_torch():
    torch = pytest.importorskip("torch")
    K = 1024
    bits = random_bits(4, K)
    llr = np.asarray(sigpu.turbo.channel(sigpu.turbo.encode(bits), ebn0_db=3.0))
    out = sigpu.turbo.decode(torch.from_numpy(llr).cuda(), device="cuda", iterations=8)
    np.testing.assert_array_equal(np.asarray(out.bits), bits)
