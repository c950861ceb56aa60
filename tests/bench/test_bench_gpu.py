"""The toolkit on a real GPU (CuPy): synchronisation, GPU pool memory, out-of-memory cleanup."""

from __future__ import annotations

import pytest

from everyo.bench import benchmark, sweep_batch_sizes

pytestmark = pytest.mark.gpu
QUICK = {"warmup": 1, "repeat": 3, "progress": False, "record_environment": False}


@pytest.fixture
def cupy():
    cp = pytest.importorskip("cupy")
    yield cp
    cp.get_default_memory_pool().free_all_blocks()


def test_cupy_work_is_synchronised_and_not_instantaneous(cupy):
    x = cupy.random.standard_normal((4096, 4096), dtype=cupy.float32)
    synced = benchmark(cupy.matmul, x, x, **QUICK)
    assert synced.synchronized
    unsynced = benchmark(cupy.matmul, x, x, sync=False, **QUICK)
    # an unsynchronised call returns at launch; a synchronised one includes the 137 GFLOP kernel
    assert synced.median > unsynced.median


def test_everyo_cuda_tensor_triggers_sync(cupy):
    import everyo as eo

    x = eo.ones(512, 512, device="cuda")
    result = benchmark(lambda t: eo.matmul(t, t), x, **QUICK)
    assert result.synchronized


def test_gpu_sweep_reports_pool_memory_and_frees_it_after_oom(cupy):
    pool = cupy.get_default_memory_pool()
    per_sample = 4 * 1024 * 1024  # float32, 1 Mi elements

    def make_batch(b):
        return cupy.ones((b, 1024 * 1024), dtype=cupy.float32)

    def step(x):
        return (x * 2).sum()

    pool.free_all_blocks()
    before = pool.used_bytes()
    result = sweep_batch_sizes(
        step, make_batch, [1, 2, 4, 8], memory_limit=int(per_sample * 5.5), **QUICK
    )
    assert [r.status for r in result.rows] == ["ok", "ok", "oom", "skipped"]
    assert result[2].gpu_memory >= 2 * per_sample  # the batch and the temporary x * 2
    assert pool.used_bytes() == before
    assert pool.total_bytes() == before  # cached blocks were handed back


def test_real_cupy_out_of_memory_is_an_oom_point(cupy):
    free, total = cupy.cuda.runtime.memGetInfo()
    pool = cupy.get_default_memory_pool()

    def make_batch(b):
        return b

    def step(b):
        # ask for more than the whole device at the second point
        return cupy.empty(int(total * 2) if b > 1 else 1024, dtype=cupy.uint8)

    result = sweep_batch_sizes(step, make_batch, [1, 2], **QUICK)
    assert [r.status for r in result.rows] == ["ok", "oom"]
    assert "OutOfMemoryError" in result[2].message
    assert pool.used_bytes() == 0
