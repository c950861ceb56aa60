"""Batch-size sweeps on PyTorch models (CPU here; CUDA tests are marked ``gpu``): inference on a
``torch.nn.Module``, train steps, peak memory from the resident set (labelled as such), the
memory limit, torch's allocator failing, and a model restored afterwards."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from everyo.bench import sweep_batch_sizes  # noqa: E402
from everyo.bench.call_memory import resident_peak  # noqa: E402
from everyo.bench.devices import is_out_of_memory  # noqa: E402
from everyo.bench.sweep_point import memory_label  # noqa: E402
from everyo.bench.torch_memory import TorchInferenceStep, holds_torch  # noqa: E402
from everyo.errors import EveryOBenchmarkError  # noqa: E402

QUICK = {"warmup": 1, "repeat": 3, "progress": False, "record_environment": False}
MiB = 2**20
HIDDEN = 2048


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(64, HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Dropout(0.5),
        torch.nn.Linear(HIDDEN, 4),
    )


def make_batch(n):
    return torch.randn(n, 64)


def test_a_torch_model_sweeps_in_eval_mode_without_grad_and_is_restored():
    model = _mlp().train()
    seen = []
    model.register_forward_hook(lambda m, i, out: seen.append((m.training, out.requires_grad)))
    result = sweep_batch_sizes(model, make_batch, [1, 8, 64], recheck=False, **QUICK)
    assert [r.status for r in result.rows] == ["ok"] * 3
    assert seen and set(seen) == {(False, False)}  # eval mode (dropout off), no graph recorded
    assert model.training  # put back as it was
    assert all(r.throughput > 0 and r.verdict is not None for r in result.rows)
    assert result.recommended is not None


def test_cpu_peak_memory_is_the_resident_set_growth_and_says_so():
    result = sweep_batch_sizes(_mlp(), make_batch, [16, 4096], recheck=False, **QUICK)
    small, big = result.rows
    assert {small.memory_source, big.memory_source} == {"rss"}
    assert small.gpu_memory is None and big.gpu_memory is None
    # 4096 x 2048 float32 activations: 32 MiB for the Linear's output, as much for the ReLU's
    activations = 4096 * HIDDEN * 4
    assert big.peak_memory >= activations
    assert big.peak_memory > 20 * small.peak_memory
    assert result.memory_label == "host, resident-set growth"
    assert "peak memory: host, resident-set growth" in str(result)
    assert "memory_source" in result.csv_text().splitlines()[0]


def test_memory_limit_ends_the_point_that_needs_more_and_skips_larger_ones():
    limit = 8 * MiB  # batch 16 needs ~0.3 MiB, batch 1024 ~16 MiB of activations
    result = sweep_batch_sizes(
        _mlp(), make_batch, [16, 1024, 4096], memory_limit=limit, recheck=False, **QUICK
    )
    assert [r.status for r in result.rows] == ["ok", "oom", "skipped"]
    assert "exceeds memory_limit 8.00 MiB" in result.rows[1].message
    assert result.largest_fit.batch_size == 16


def test_torch_cpu_allocator_failure_is_out_of_memory_and_the_sweep_goes_on():
    def step(x):
        # 2**58 bytes per sample at 64: no machine has it, torch's CPU allocator raises
        return torch.empty(x.shape[0] * 2**52, dtype=torch.uint8) if x.shape[0] >= 64 else x * 2

    result = sweep_batch_sizes(step, make_batch, "auto", max_batch=256, recheck=False, **QUICK)
    statuses = {r.batch_size: r.status for r in result.rows}
    assert statuses[32] == "ok" and statuses[64] == "oom"
    assert "DefaultCPUAllocator" in next(r for r in result.rows if r.status == "oom").message
    assert result.largest_fit.batch_size >= 32


def test_out_of_memory_recognises_torch_and_nothing_else():
    assert is_out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried"))
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate"))
    assert not is_out_of_memory(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))


def test_train_mode_takes_a_step_function_not_the_model():
    model = _mlp()
    with pytest.raises(EveryOBenchmarkError, match="mode='train' needs a step function"):
        sweep_batch_sizes(model, make_batch, [1], mode="train", **QUICK)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step(x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()

    result = sweep_batch_sizes(
        train_step, make_batch, [8, 32], mode="train", recheck=False, **QUICK
    )
    assert [r.status for r in result.rows] == ["ok", "ok"]
    assert {r.memory_source for r in result.rows} == {"rss"}


def test_a_dict_batch_goes_to_the_model_as_keyword_arguments():
    class TwoInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(8, 2)

        def forward(self, input_ids, mask):
            return self.proj(input_ids * mask)

    step = TorchInferenceStep(TwoInputs())
    assert holds_torch(step)
    out = step({"input_ids": torch.ones(3, 8), "mask": torch.zeros(3, 8)})
    assert out.shape == (3, 2) and not out.requires_grad


def test_resident_peak_sees_memory_touched_during_the_call():
    size = 64 * MiB

    def touch():
        block = np.ones(size // 8)  # written, so its pages are resident
        return float(block[-1])

    assert resident_peak(touch) >= 0.9 * size
    assert resident_peak(lambda: None) < size / 4


def test_resident_peak_falls_back_to_polling_where_the_high_water_mark_cannot_be_reset(
    monkeypatch,
):
    pytest.importorskip("psutil")
    import time

    from everyo.bench import call_memory as memory

    monkeypatch.setattr(memory, "_reset_high_water_mark", lambda: False)
    size = 64 * MiB

    def hold():
        block = np.ones(size // 8)
        time.sleep(0.05)  # held across many polls
        return float(block[0])

    assert resident_peak(hold) >= 0.9 * size


def test_memory_label_names_every_source_of_a_sweep():
    from everyo.bench.sweep_point import SweepRow

    rows = [SweepRow(1, "ok"), SweepRow(2, "ok", gpu_memory=10)]
    assert memory_label(rows) == "host / GPU"
    assert memory_label([SweepRow(1, "ok", memory_source="torch.cuda")]) == "GPU, torch allocator"
    assert memory_label([SweepRow(1, "oom")]) == "host"


def test_everyo_and_its_sweeps_do_not_import_torch():
    code = (
        "import sys, everyo, everyo.bench.sweep, everyo.bench.torch_memory; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- CUDA ------------------------------------------------------------------------------------------
@pytest.fixture
def cuda():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU with torch's CUDA build; none is present")
    yield torch.device("cuda")
    torch.cuda.empty_cache()


@pytest.mark.gpu
def test_cuda_peak_memory_comes_from_torchs_allocator(cuda):
    model = _mlp()
    result = sweep_batch_sizes(model, make_batch, [16, 4096], device="cuda", recheck=False, **QUICK)
    small, big = result.rows
    assert {small.memory_source, big.memory_source} == {"torch.cuda"}
    assert big.gpu_memory >= 4096 * HIDDEN * 4 > small.gpu_memory
    assert result.memory_label == "GPU, torch allocator"
    assert all(r.status == "ok" for r in result.rows)


@pytest.mark.gpu
def test_cuda_out_of_memory_ends_the_point_and_frees_its_memory(cuda):
    free, _total = torch.cuda.mem_get_info()
    per_sample = 2**30  # 1 GiB a sample: the auto sweep runs out well before max_batch

    def step(x):
        return torch.empty(x.shape[0] * per_sample, dtype=torch.uint8, device=cuda).sum()

    before = torch.cuda.memory_allocated()
    result = sweep_batch_sizes(
        step,
        lambda n: torch.ones(n, 4, device=cuda),
        "auto",
        max_batch=4 * max(1, free // per_sample),
        recheck=False,
        **QUICK,
    )
    assert any(r.status == "oom" for r in result.rows)
    assert "OutOfMemoryError" in next(r for r in result.rows if r.status == "oom").message
    assert torch.cuda.memory_allocated() == before
