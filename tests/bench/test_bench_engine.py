"""The toolkit on everyo models: the guide's example, sweeps of modules, precision of a model."""

from __future__ import annotations

import numpy as np
import pytest

import everyo as eo
from everyo.bench import benchmark, compare_precisions, sweep_batch_sizes
from everyo.errors import EveryOBenchmarkError

QUICK = {"warmup": 0, "repeat": 2, "progress": False, "record_environment": False}


def guide_model():
    return eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 16, seed=1))


def test_guides_complete_benchmark_example():
    model = guide_model()
    model.eval()
    x = eo.zeros(128, 32)
    with eo.no_grad():
        result = benchmark(model, x, warmup=10, repeat=100, samples=128)
    assert result.n == 100 and result.warmup == 10
    assert result.throughput == pytest.approx(128 / result.mean)
    assert result.workload["args"] == ["Tensor(128, 32) float32 cpu"]
    assert not result.synchronized
    for line in ("Mean latency:", "Median latency:", "Minimum latency:", "Maximum latency:"):
        assert line in str(result)
    assert "Approx. throughput:" in str(result)


class Recorder(eo.Module):
    """Records whether gradients were on and which mode it was in at each call."""

    def __init__(self):
        super().__init__()
        self.linear = eo.Linear(4, 2, seed=0)
        self.seen = []

    def forward(self, x):
        self.seen.append((eo.is_grad_enabled(), self.training))
        return self.linear(x)


def test_sweeping_a_module_runs_it_in_eval_mode_without_grad_and_restores_it():
    model = Recorder()
    model.train()
    result = sweep_batch_sizes(model, lambda b: eo.ones(b, 4), [1, 4], **QUICK)
    assert [r.status for r in result.rows] == ["ok", "ok"]
    assert set(model.seen) == {(False, False)}
    assert model.training  # restored


def test_training_sweep_of_a_module_needs_a_step_function():
    with pytest.raises(EveryOBenchmarkError, match="step function"):
        sweep_batch_sizes(guide_model(), lambda b: eo.ones(b, 32), [1], mode="train", **QUICK)


def test_training_sweep_with_a_step_function():
    model = guide_model()
    optimizer = eo.optim.SGD(model.parameters(), lr=0.01)

    def step(x):
        optimizer.zero_grad()
        loss = model(x).sum()
        loss.backward()
        optimizer.step()

    result = sweep_batch_sizes(step, lambda b: eo.ones(b, 32), [2, 8], mode="train", **QUICK)
    assert [r.status for r in result.rows] == ["ok", "ok"]
    assert result.mode == "train"


def test_module_memory_boundary_from_tensor_sizes():
    model = eo.Sequential(eo.Linear(256, 256, seed=0))
    # float32 batch and output, 1 kB per sample each: 64 samples fit in 100 samples' worth
    per_sample = 2 * 256 * 4
    result = sweep_batch_sizes(
        model, lambda b: eo.ones(b, 256), [8, 64, 128], memory_limit=100 * per_sample, **QUICK
    )
    assert [r.status for r in result.rows] == ["ok", "ok", "oom"]


def test_precision_of_a_model_casts_a_copy():
    model = eo.Sequential(eo.Linear(8, 8, seed=0), eo.Tanh())
    x = eo.tensor(np.random.default_rng(0).standard_normal((16, 8)))
    result = compare_precisions(model, x, ("float32", "float64"), repeat=2)
    assert result["float32"].output_dtype == "float32"
    assert result["float32"].passed
    assert next(iter(model.parameters())).dtype == np.float32  # the original is untouched


def test_measure_training_with_an_everyo_trainer():
    from everyo.bench import measure_training

    rng = np.random.default_rng(0)
    features = rng.standard_normal((64, 4)).astype(np.float32)
    targets = rng.standard_normal((64, 1)).astype(np.float32)
    loader = eo.DataLoader(eo.ArrayDataset(features, targets), batch_size=16)
    model = eo.Sequential(eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 1, seed=1))
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.01), eo.MSELoss())
    before = next(iter(model.parameters())).numpy()
    stats = measure_training(trainer, loader, warmup=1, val_loader=loader)
    assert stats.steps == 4 and stats.samples == 64
    assert stats.validation_s is not None and stats.validation_s > 0
    assert stats.peak_memory > 0
    assert not np.array_equal(before, next(iter(model.parameters())).numpy())  # it trained


def test_a_user_module_with_gpu_parameters_is_synchronised():
    from bench_fakes import FakeCudaTensor

    class OnGpu(eo.Module):  # defined outside everyo, parameters "on cuda"
        def parameters(self, recurse=True):
            yield FakeCudaTensor()

        def forward(self):
            return None

    syncs = []
    result = benchmark(
        OnGpu(), warmup=0, repeat=2, synchronize=lambda: syncs.append(1), record_environment=False
    )
    assert result.synchronized and len(syncs) == 4
