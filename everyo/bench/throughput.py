"""Training throughput: samples/s, time per epoch, batch time, validation time, peak memory.

These are the figures the guide's "Training Throughput" section asks to record. Data loading and
the training step are timed separately, so a slow input pipeline shows up as such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from everyo.bench.call_memory import traced_peak
from everyo.bench.devices import gpu_pool_bytes, on_gpu
from everyo.bench.timing import Timer, check_count
from everyo.errors import EveryOBenchmarkError
from everyo.machine_state import MachineState, MachineWatch
from everyo.spelling import NO_VALUE
from everyo.thread_policy import ThreadPolicy

__all__ = ["measure_training", "TrainingThroughput"]


@dataclass
class TrainingThroughput:
    """Measured training figures. Times in seconds unless the name says otherwise."""

    steps: int
    samples: int
    step_times: np.ndarray = field(repr=False)
    data_times: np.ndarray = field(repr=False)
    batches_per_epoch: int | None = None
    validation_s: float | None = None
    peak_memory: int | None = None
    gpu_memory: int | None = None
    machine: dict | None = None
    """The machine's state while the steps ran (:class:`~everyo.machine_state.MachineState`
    as a dict); :attr:`machine_state` gives the object."""

    @property
    def machine_state(self) -> MachineState | None:
        return MachineState.from_dict(self.machine)

    @property
    def elapsed_s(self) -> float:
        """Data loading plus training steps over the measured steps."""
        return float(self.step_times.sum() + self.data_times.sum())

    @property
    def samples_per_s(self) -> float:
        """The guide's ``SamplesProcessed / ElapsedSeconds`` (data loading included)."""
        return self.samples / self.elapsed_s

    @property
    def mean_batch_ms(self) -> float:
        """Mean time of one training step (forward, loss, backward, optimizer), ms."""
        return float(self.step_times.mean() * 1e3)

    @property
    def median_batch_ms(self) -> float:
        return float(np.median(self.step_times) * 1e3)

    @property
    def mean_data_ms(self) -> float:
        """Mean time to fetch one batch from the loader, ms."""
        return float(self.data_times.mean() * 1e3)

    @property
    def epoch_s(self) -> float | None:
        """Estimated time per epoch: batches per epoch times the mean (data + step) time."""
        if self.batches_per_epoch is None:
            return None
        return self.batches_per_epoch * self.elapsed_s / self.steps

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable figures (raw step and data times in seconds)."""
        return {
            "steps": self.steps,
            "samples": self.samples,
            "samples_per_s": self.samples_per_s,
            "epoch_s": self.epoch_s,
            "mean_batch_ms": self.mean_batch_ms,
            "median_batch_ms": self.median_batch_ms,
            "mean_data_ms": self.mean_data_ms,
            "validation_s": self.validation_s,
            "peak_memory": self.peak_memory,
            "gpu_memory": self.gpu_memory,
            "batches_per_epoch": self.batches_per_epoch,
            "step_times_s": self.step_times.tolist(),
            "data_times_s": self.data_times.tolist(),
            "machine": self.machine,
        }

    def __str__(self) -> str:
        def fmt(value, spec, unit):
            return NO_VALUE if value is None else f"{value:{spec}} {unit}"

        peak = self.gpu_memory if self.gpu_memory is not None else self.peak_memory
        return "\n".join(
            [
                f"Training throughput over {self.steps} steps ({self.samples} samples)",
                f"Samples per second: {self.samples_per_s:.2f} samples/s",
                f"Time per epoch: {fmt(self.epoch_s, '.3f', 's')}",
                f"Average time per batch: {self.mean_data_ms + self.mean_batch_ms:.4f} ms "
                f"(waiting for data {self.mean_data_ms:.4f} ms + training step "
                f"{self.mean_batch_ms:.4f} ms)",
                f"Validation time: {fmt(self.validation_s, '.3f', 's')}",
                f"Peak memory: {fmt(None if peak is None else peak / 2**20, '.2f', 'MiB')}",
                *([state.line()] if (state := self.machine_state) is not None else []),
            ]
        )


def measure_training(
    trainer_or_step: Any,
    loader: Iterable,
    *,
    steps: int | None = None,
    warmup: int = 2,
    val_loader: Iterable | None = None,
    validate: Callable[[Iterable], Any] | None = None,
    memory: bool = True,
    clock: Callable[[], float] | None = None,
    synchronize: Callable[[], None] | None = None,
    threads: Any = "auto",
) -> TrainingThroughput:
    """Time training steps over a loader.

    Parameters
    ----------
    trainer_or_step : callable or trainer
        ``step(batch)`` running forward, loss, backward and the optimizer; or a trainer with a
        ``train_step(batch)`` method (and ``evaluate(loader)`` for validation).
    loader : iterable of batches
        E.g. an :class:`everyo.DataLoader`; re-iterated when more steps are asked for than it
        holds. The batch size is read from each batch (first array's first dimension).
    steps : int, optional
        Measured steps after warmup; default one epoch (``len(loader)``).
    warmup : int
        Untimed steps first.
    val_loader, validate : optional
        Validation is timed once after training as ``validate(val_loader)`` (default: the
        trainer's ``evaluate``).
    memory : bool
        Run one more step under :mod:`tracemalloc` (untimed: tracing slows Python) and report the
        peak bytes it allocated; on a GPU, CuPy's pool bytes.
    clock, synchronize : callable, optional
        As for :func:`everyo.bench.benchmark`.
    threads : "auto", int or None
        BLAS/OpenMP threads while measuring, as for :func:`everyo.bench.benchmark`; the
        machine's state over the measured steps is recorded (``result.machine_state``).
    """
    step, validate = _resolve(trainer_or_step, validate)
    n_batches = _len_or_none(loader)
    steps, warmup = _check_counts(steps, warmup, n_batches)
    timer = Timer(clock=clock, synchronize=synchronize)
    batches = _cycle(loader)
    with ThreadPolicy(threads) as policy:
        watch = MachineWatch(threads_policy=policy.policy, threads_applied=policy.applied)
        watch.start()
        for _ in range(warmup):
            step(next(batches))
        step_times, data_times, samples = [], [], 0
        last = None
        for _ in range(steps):
            start = timer.clock()
            last = next(batches)
            data_times.append(timer.clock() - start)
            timer.watch(last, step)
            step_times.append(timer.time_once(lambda b=last: step(b)))
            samples += _batch_len(last)
        machine = watch.stop()
        validation_s = None
        if val_loader is not None and validate is not None:
            validation_s = timer.time_once(lambda: validate(val_loader))
        peak, gpu = _probe_memory(step, last) if memory else (None, None)
    return TrainingThroughput(
        steps=steps,
        samples=samples,
        step_times=np.asarray(step_times),
        data_times=np.asarray(data_times),
        batches_per_epoch=n_batches,
        validation_s=validation_s,
        peak_memory=peak,
        gpu_memory=gpu,
        machine=machine.to_dict(),
    )


def _resolve(trainer_or_step, validate):
    train_step = getattr(trainer_or_step, "train_step", None)  # eo.Trainer has one
    if callable(train_step):
        evaluate = getattr(trainer_or_step, "evaluate", None)
        return train_step, validate or (evaluate if callable(evaluate) else None)
    if not callable(trainer_or_step):
        raise EveryOBenchmarkError(
            "measure_training() needs a step function step(batch) or a trainer with "
            f"train_step(batch), got {type(trainer_or_step).__name__}"
        )
    return trainer_or_step, validate


def _check_counts(steps, warmup, n_batches) -> tuple[int, int]:
    warmup = check_count("warmup", warmup, minimum=0)
    if steps is None:
        if not n_batches:
            raise EveryOBenchmarkError("the loader has no len() (or is empty): pass steps=N")
        return n_batches, warmup
    return check_count("steps", steps, minimum=1), warmup


def _len_or_none(loader) -> int | None:
    try:
        return len(loader)
    except TypeError:
        return None


def _cycle(loader):
    while True:
        empty = True
        for batch in loader:
            empty = False
            yield batch
        if empty:
            raise EveryOBenchmarkError("the loader yielded no batches")
        if iter(loader) is loader:  # a one-shot iterator cannot be re-iterated
            raise EveryOBenchmarkError(
                "the loader ran out of batches: pass fewer steps, or a re-iterable loader"
            )


def _batch_len(batch) -> int:
    first = batch
    if isinstance(batch, (tuple, list)) and batch:
        first = batch[0]
    elif isinstance(batch, dict) and batch:
        first = next(iter(batch.values()))
    shape = getattr(first, "shape", None)
    if shape:
        return int(shape[0])
    try:
        return len(first)
    except TypeError:
        return 1


def _probe_memory(step, batch) -> tuple[int | None, int | None]:
    if batch is None:
        return None, None
    peak = traced_peak(lambda: step(batch))
    gpu_after = gpu_pool_bytes()
    gpu = gpu_after if gpu_after is not None and on_gpu(batch) else None
    return peak, gpu
