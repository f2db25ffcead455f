"""The cache of GPU memory behind sigpu's arrays: a batch let go is reused for the next batch of
its size, that batch is written only after the work its consumers queued on the memory (a long
kernel reading the first batch must still see the first batch, through PyTorch's DLPack stream
and through CuPy's __cuda_array_interface__), nothing waits for unrelated streams, and the cache
keeps under its budget. Expected clips come from the CPU backend (checked against the source PCM
in test_clip_loader.py)."""

import gc

import numpy as np
import pytest

import sigpu
import sigpu.flac

# About half a second of a GPU thread's clock (1.4-2 GHz): far longer than decoding a batch.
SLEEP_CYCLES = 1_000_000_000


def pointer(a):
    return a.__cuda_array_interface__["data"][0]


def clips(make_flac, starts, length, device, seed):
    (a, _), (b, _) = make_flac(samples=60000, seed=seed), make_flac(samples=60000, seed=seed + 1)
    srcs = [a, b, a, b][:len(starts)]
    return sigpu.flac.decode_clips(srcs, starts, length=length, device=device, dtype="float32",
                                   channels_first=True)


@pytest.fixture
def fresh_cache():
    """An empty cache with its default budget, given back as found."""
    budget = sigpu.gpu_cache_info(0)["budget"]
    sigpu.release_gpu_cache()
    yield
    sigpu.set_gpu_cache_budget(budget)
    sigpu.release_gpu_cache()


def test_budget_is_set_and_read():
    budget = sigpu.gpu_cache_info()["budget"]
    try:
        sigpu.set_gpu_cache_budget(12345)
        info = sigpu.gpu_cache_info()
        assert info["budget"] == 12345 and info["bytes"] <= 12345
    finally:
        sigpu.set_gpu_cache_budget(budget)
    sigpu.release_gpu_cache()
    assert sigpu.gpu_cache_info()["blocks"] == 0


@pytest.mark.gpu
def test_a_batch_let_go_is_reused(make_flac, fresh_cache):
    first = clips(make_flac, [0, 100, 20000], 12345, "cuda", 41)
    p = pointer(first)
    start = sigpu.gpu_cache_info(0)
    del first
    gc.collect()
    held = sigpu.gpu_cache_info(0)
    assert held["blocks"] == start["blocks"] + 1 and held["bytes"] >= 3 * 2 * 12345 * 4
    second = clips(make_flac, [7, 300, 40000], 12345, "cuda", 43)
    assert pointer(second) == p
    now = sigpu.gpu_cache_info(0)
    assert now["reused"] == start["reused"] + 1 and now["blocks"] == start["blocks"]
    np.testing.assert_array_equal(second.numpy(),
                                  np.asarray(clips(make_flac, [7, 300, 40000], 12345, "cpu", 43)))
    # Arrays copied up from the host (ranged decodes) take the cache's memory too.
    path, pcm = make_flac(samples=60000, seed=45)
    a = sigpu.flac.decode(path, device="cuda", dtype="int16", start=1000, stop=31000)
    p = pointer(a)
    del a
    gc.collect()
    b = sigpu.flac.decode(path, device="cuda", dtype="int16", start=2000, stop=32000)
    assert pointer(b) == p
    np.testing.assert_array_equal(b.numpy(), pcm[2000:32000])


@pytest.mark.gpu
def test_reuse_waits_for_the_dlpack_consumers_stream(make_flac, fresh_cache):
    torch = pytest.importorskip("torch")
    length, first_starts, next_starts = 23456, [0, 500, 30000, 9000], [11, 2000, 35000, 100]
    # Decoded once before, so that the engine has its buffers (growing them would free memory,
    # which waits for the whole device and would hide what is checked here).
    warm = clips(make_flac, next_starts, length, "cuda", 51)
    want_next = warm.numpy()
    del warm
    gc.collect()
    sigpu.release_gpu_cache()
    first = clips(make_flac, first_starts, length, "cuda", 51)
    want = first.numpy()
    assert not np.array_equal(want, want_next)
    consumer, bystander = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(consumer):
        t = torch.from_dlpack(first)
        p = t.data_ptr()
        torch.cuda._sleep(SLEEP_CYCLES)  # the read below starts after this
        seen = t.clone()
    with torch.cuda.stream(bystander):  # work that has nothing to do with the batch
        torch.cuda._sleep(4 * SLEEP_CYCLES)
    del t, first
    gc.collect()
    second = clips(make_flac, next_starts, length, "cuda", 51)
    assert not bystander.query(), "the next batch waited for a stream that never used its memory"
    with torch.cuda.stream(consumer):
        assert torch.from_dlpack(second).data_ptr() == p
    consumer.synchronize()
    np.testing.assert_array_equal(seen.cpu().numpy(), want)
    np.testing.assert_array_equal(second.numpy(), want_next)
    bystander.synchronize()


SPIN_COPY = r"""
extern "C" __global__ void spin_copy(const float* x, float* y, long long n, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = x[i];
}
"""


@pytest.mark.gpu
def test_reuse_waits_for_the_cuda_array_interface_consumer(make_flac, fresh_cache):
    cupy = pytest.importorskip("cupy")
    length, first_starts, next_starts = 17171, [0, 500, 30000], [11, 2000, 35000]
    warm = clips(make_flac, next_starts, length, "cuda", 61)
    want_next = warm.numpy()
    del warm
    gc.collect()
    sigpu.release_gpu_cache()
    first = clips(make_flac, first_starts, length, "cuda", 61)
    want = first.numpy()
    c = cupy.asarray(first)  # the interface's consumer: CuPy's current stream, the default one
    p = c.data.ptr
    seen = cupy.empty_like(c)
    kernel = cupy.RawKernel(SPIN_COPY, "spin_copy")
    kernel((64,), (256,), (c, seen, np.int64(c.size), np.int64(SLEEP_CYCLES)))
    del c, first
    gc.collect()
    second = clips(make_flac, next_starts, length, "cuda", 61)
    assert pointer(second) == p
    np.testing.assert_array_equal(cupy.asnumpy(seen), want)
    np.testing.assert_array_equal(second.numpy(), want_next)


@pytest.mark.gpu
def test_the_cache_keeps_under_its_budget(make_flac, fresh_cache):
    path, _ = make_flac(samples=60000, seed=71)
    kw = dict(length=20000, device="cuda", dtype="float32")
    one = sigpu.flac.decode_clips([path], [0], **kw)
    del one
    gc.collect()
    block = sigpu.gpu_cache_info(0)["bytes"]  # one batch's size class
    assert block >= 20000 * 2 * 4
    sigpu.set_gpu_cache_budget(3 * block)
    batches = [sigpu.flac.decode_clips([path], [i * 100], **kw) for i in range(6)]
    pointers = {pointer(b) for b in batches}
    assert len(pointers) == 6
    del batches
    gc.collect()
    info = sigpu.gpu_cache_info(0)
    assert info["blocks"] == 3 and info["bytes"] == 3 * block <= info["budget"]
    again = [sigpu.flac.decode_clips([path], [i * 100], **kw) for i in range(3)]
    assert {pointer(b) for b in again} <= pointers
    assert sigpu.gpu_cache_info(0)["blocks"] == 0
    sigpu.set_gpu_cache_budget(block)
    del again
    gc.collect()
    assert sigpu.gpu_cache_info(0)["blocks"] == 1
    sigpu.set_gpu_cache_budget(0)
    info = sigpu.gpu_cache_info(0)
    assert info["blocks"] == 0 and info["bytes"] == 0
    # Memory whose consumer took its ordering upon itself (stream -1) is freed, not kept.
    sigpu.set_gpu_cache_budget(3 * block)
    a = sigpu.flac.decode_clips([path], [0], **kw)
    capsule = a.__dlpack__(stream=-1)
    del a, capsule
    gc.collect()
    assert sigpu.gpu_cache_info(0)["blocks"] == 0


@pytest.mark.gpu
def test_a_clip_loader_reuses_its_batches(make_flac, fresh_cache):
    files = [str(make_flac(samples=60000, seed=80 + i)[0]) for i in range(3)]
    start = sigpu.gpu_cache_info(0)["reused"]
    cpu = sigpu.flac.ClipLoader(files, 0.1, 4, device="cpu", seed=3)
    gpu = sigpu.flac.ClipLoader(files, 0.1, 4, device="cuda", seed=3)
    for (g, _), (c, _) in zip(gpu, cpu):
        np.testing.assert_array_equal(g.numpy(), np.asarray(c))
    assert sigpu.gpu_cache_info(0)["reused"] > start
