"""measure_training(): samples/s, batch and epoch time, validation, memory, with a fake clock."""

from __future__ import annotations

import numpy as np
import pytest
from bench_fakes import FakeClock

from everyo.bench import measure_training
from everyo.errors import EveryOBenchmarkError


def batches(n_batches=5, batch_size=8):
    return [(np.ones((batch_size, 4)), np.zeros(batch_size)) for _ in range(n_batches)]


class FakeTrainer:
    """train_step takes 10 ms on the fake clock; evaluate takes 50 ms."""

    def __init__(self, clock):
        self.clock, self.steps = clock, 0

    def train_step(self, batch):
        self.steps += 1
        self.clock.advance(0.010)
        grad = np.ones((batch[0].shape[0], 1000))  # 8 kB per sample of activations
        return float(grad.sum())

    def evaluate(self, loader):
        self.clock.advance(0.050)
        return {"loss": 0.0}


class TimedLoader:
    """A re-iterable loader whose batches take 2 ms each to produce."""

    def __init__(self, clock, n_batches=5, batch_size=8):
        self.clock, self.items = clock, batches(n_batches, batch_size)

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        for item in self.items:
            self.clock.advance(0.002)
            yield item


def test_trainer_figures_from_a_fake_clock():
    clock = FakeClock()
    trainer = FakeTrainer(clock)
    loader = TimedLoader(clock)
    result = measure_training(trainer, loader, warmup=2, val_loader=[1], clock=clock)
    assert result.steps == 5  # one epoch by default
    assert trainer.steps == 2 + 5 + 1  # warmup, measured, memory probe
    assert result.samples == 40
    assert result.mean_batch_ms == pytest.approx(10.0)
    assert result.mean_data_ms == pytest.approx(2.0)
    assert result.samples_per_s == pytest.approx(40 / (5 * 0.012))
    assert result.epoch_s == pytest.approx(5 * 0.012)
    assert result.validation_s == pytest.approx(0.050)
    assert result.peak_memory >= 8 * 1000 * 8
    text = str(result)
    for line in (
        "Samples per second:",
        "Time per epoch:",
        "Average time per batch: 12.0000 ms (waiting for data 2.0000 ms + training step "
        "10.0000 ms)",
        "Validation time:",
        "Peak memory:",
    ):
        assert line in text


def test_step_function_and_more_steps_than_one_epoch():
    clock = FakeClock()
    calls = []

    def step(batch):
        calls.append(batch[0].shape[0])
        clock.advance(0.004)

    result = measure_training(step, batches(3, 16), steps=7, warmup=0, memory=False, clock=clock)
    assert len(calls) == 7 and result.samples == 7 * 16
    assert result.peak_memory is None and result.validation_s is None
    assert result.to_dict()["steps"] == 7


def test_one_shot_iterators_need_enough_batches():
    with pytest.raises(EveryOBenchmarkError, match="ran out of batches"):
        measure_training(lambda b: None, iter(batches(2)), steps=5, warmup=0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"steps": 0}, "steps"),
        ({"warmup": -1}, "warmup"),
    ],
)
def test_bad_counts(kwargs, message):
    with pytest.raises(EveryOBenchmarkError, match=message):
        measure_training(lambda b: None, batches(), **kwargs)


def test_needs_steps_without_len():
    with pytest.raises(EveryOBenchmarkError, match="steps=N"):
        measure_training(lambda b: None, iter(batches()))


def test_needs_a_step():
    with pytest.raises(EveryOBenchmarkError, match="step function"):
        measure_training(42, batches())
