"""``Trainer``: the training loop with metrics, validation, callbacks, gradient accumulation,
gradient clipping, mixed precision and a progress bar.

With a profiler active, each step records the regions ``data``, ``forward``, ``loss``,
``backward`` and ``optimizer`` (kind ``"train"``), so a profile shows where training time goes.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from everyo.core import dtype as _dt
from everyo.core.autocast import autocast as _autocast
from everyo.core.autograd import no_grad
from everyo.core.device import device as _resolve
from everyo.core.tensor import Tensor
from everyo.data.dataset import to_batch
from everyo.errors import EveryOConfigError
from everyo.nn.module import Module
from everyo.nn.utils import clip_grad_norm_
from everyo.optim.optimizer import Optimizer
from everyo.profiler.recording import hooks as _hooks
from everyo.training.callbacks import Callback
from everyo.training.epoch_memory import PeakMemory
from everyo.training.history import History
from everyo.training.metrics import resolve_metrics

__all__ = ["Trainer"]

_NULL = contextlib.nullcontext()


def _region(name: str):
    p = _hooks.active
    return _NULL if p is None else p.region(name, "train")


def _split(batch) -> tuple[tuple, Any]:
    """``(inputs, targets)`` of a batch: the last element of a tuple/list is the target."""
    if isinstance(batch, (tuple, list)):
        if len(batch) < 2:
            return tuple(batch), None
        return tuple(batch[:-1]), batch[-1]
    return (batch,), None


def _count(x) -> int:
    return int(x.shape[0]) if hasattr(x, "shape") and len(x.shape) else 1


class Trainer:
    """Train ``model`` with ``optimizer`` on ``loss_fn(outputs, targets)``.

    Parameters
    ----------
    model : Module
        Moved to ``device`` on construction.
    optimizer : everyo.optim.Optimizer
    loss_fn : callable
        E.g. ``eo.CrossEntropyLoss()``; returns a scalar tensor.
    metrics : iterable of names or callables
        ``"accuracy"``, ``"binary_accuracy"``, ``"mae"``, ``"mse"``, ``"r2"`` or
        ``fn(outputs, targets) -> float``, called with arrays (NumPy on the CPU, CuPy on a GPU).
    device : str or Device
        Where the model runs; batches are moved there.
    grad_clip : float, optional
        Clip the global gradient norm to this value before each optimizer step.
    accumulate_steps : int
        Sum gradients over this many batches per optimizer step (the loss is divided by it).
    autocast : None, True or a dtype
        Mixed precision: forward in ``"float16"`` (``True``) or the dtype given, loss in float32,
        with a :class:`GradScaler` guarding float16 gradients.

    >>> import everyo as eo
    >>> from everyo.datasets import make_blobs
    >>> X, y = make_blobs(200, centers=3, seed=0)
    >>> model = eo.Sequential(eo.Linear(2, 16, seed=0), eo.ReLU(), eo.Linear(16, 3, seed=1))
    >>> trainer = eo.Trainer(model, eo.optim.Adam(model.parameters(), lr=0.05),
    ...                      eo.CrossEntropyLoss(), metrics=["accuracy"])
    >>> history = trainer.fit(eo.DataLoader(eo.ArrayDataset(X, y), 32, shuffle=True, seed=0),
    ...                       epochs=5, progress=False)
    >>> history.last["accuracy"] > 0.9
    True
    """

    def __init__(self, model: Module, optimizer, loss_fn: Callable, *,
                 metrics: Iterable = (), device="cpu", grad_clip: float | None = None,
                 accumulate_steps: int = 1, autocast=None,
                 gradient_clip: float | None = None) -> None:  # fmt: skip
        if gradient_clip is not None:  # reference EveryO's name for grad_clip
            grad_clip = gradient_clip
        if not isinstance(model, Module):
            raise TypeError(f"Trainer needs an everyo Module, got {type(model).__name__}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"Trainer needs an everyo optimizer (eo.SGD, eo.Adam, ... or an eo.Optimizer "
                f"subclass), got {type(optimizer).__name__}"
            )
        if not callable(loss_fn):
            raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
        if int(accumulate_steps) < 1:
            raise EveryOConfigError(f"accumulate_steps must be >= 1, got {accumulate_steps}")
        if grad_clip is not None and grad_clip <= 0:
            raise EveryOConfigError(f"grad_clip must be > 0, got {grad_clip}")
        self.device = _resolve(device)
        self.model = model.to(self.device)
        self.optimizer, self.loss_fn = optimizer, loss_fn
        self.metrics = resolve_metrics(metrics)
        self.grad_clip, self.accumulate_steps = grad_clip, int(accumulate_steps)
        self.autocast_dtype = None
        if autocast is not None and autocast is not False:
            self.autocast_dtype = _dt.to_dtype("float16" if autocast is True else autocast)
        self.scaler = self._make_scaler()
        self.history = History()
        self.stop_training = False
        self.total_epochs = 0  # the epochs asked of the current fit()
        self.global_step = 0
        self._steps_taken = 0  # train_step() calls, for gradient accumulation outside fit()

    @property
    def gradient_clip(self) -> float | None:
        """Reference EveryO's name for :attr:`grad_clip`."""
        return self.grad_clip

    def _make_scaler(self):
        if self.autocast_dtype != _dt.float16:
            return None
        from everyo.core.grad_scaler import GradScaler

        return GradScaler()

    # ---- one step ---------------------------------------------------------------------------
    def _to_device(self, x):
        return to_batch(x, self.device)

    def _forward_loss(self, inputs, targets):
        ctx = _autocast(self.autocast_dtype) if self.autocast_dtype is not None else _NULL
        with ctx:
            with _region("forward"):
                outputs = self.model(*inputs)
        with _region("loss"):
            if self.autocast_dtype is not None and outputs.dtype != _dt.float32:
                outputs = outputs.astype("float32")  # losses in float32, as torch.autocast does
            loss = self.loss_fn(outputs, targets)
        return outputs, loss

    def _optimizer_step(self) -> None:
        with _region("optimizer"):
            if self.grad_clip is not None:
                if self.scaler is not None:
                    self.scaler.unscale_(self.optimizer)  # clip the true gradients
                params = [p for g in self.optimizer.param_groups for p in g["params"]]
                clip_grad_norm_(params, self.grad_clip)
            if self.scaler is not None:
                self.scaler.step(self.optimizer)
                self.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
        self.global_step += 1

    def _train_batch(self, batch, index: int, last: bool):
        inputs, targets = _split(batch)
        if targets is None:
            raise EveryOConfigError(
                "training batches need targets: the loader must yield (inputs, targets), e.g. "
                "from eo.ArrayDataset(features, targets)"
            )
        outputs, loss = self._forward_loss(inputs, targets)
        with _region("backward"):
            scaled = loss / self.accumulate_steps if self.accumulate_steps > 1 else loss
            if self.scaler is None:
                scaled.backward()
            else:
                # an overflow of the scaled float16 gradients is expected: the scaler sees the
                # infs, skips the step and lowers its scale
                with np.errstate(over="ignore", invalid="ignore"):
                    self.scaler.scale(scaled).backward()
        if (index + 1) % self.accumulate_steps == 0 or last:
            self._optimizer_step()
        return outputs, targets, loss

    def train_step(self, batch) -> Tensor:
        """One step of :meth:`fit` on ``batch``: to the device, forward, loss, backward and, every
        ``accumulate_steps`` calls, the optimizer step. Returns the (unscaled) loss.

        For driving training by hand (and for ``everyo.bench.measure_training``)::

            loss = trainer.train_step((x, y))
        """
        self.model.train()
        _, _, loss = self._train_batch(self._to_device(batch), self._steps_taken, False)
        self._steps_taken += 1
        return loss

    # ---- loops ------------------------------------------------------------------------------
    def fit(self, train_loader, *, epochs: int = 10, val_loader=None, callbacks: Iterable = (),
            progress: bool = True, validation_loader=None, verbose: bool | None = None,
            log_every: int = 1) -> History:  # fmt: skip
        """Train for ``epochs`` epochs; returns (and extends) :attr:`history`.

        Each epoch's record holds the training loss and metrics (means over the epoch),
        ``val_*`` entries with ``val_loader``, the learning rate, samples/s, epoch time, mean
        batch time, validation time and peak memory. ``progress`` shows a tqdm bar (a widget
        in notebooks, text in terminals).

        Reference EveryO's spellings work too: ``validation_loader=`` for ``val_loader=``, and
        ``verbose=`` (True prints one line every ``log_every`` epochs with a
        :class:`~everyo.training.loggers.ProgressLogger` instead of the bar; False is silent).
        """
        if int(epochs) < 1:
            raise EveryOConfigError(f"epochs must be >= 1, got {epochs}")
        if validation_loader is not None:
            val_loader = validation_loader
        callbacks = list(callbacks)
        if verbose is not None:
            from everyo.training.loggers import ProgressLogger

            progress = False
            if verbose and not any(isinstance(cb, ProgressLogger) for cb in callbacks):
                callbacks.append(ProgressLogger(every=log_every))
        self.total_epochs = int(epochs)
        for cb in callbacks:
            if not isinstance(cb, Callback):
                raise TypeError(f"callbacks must be Callback instances, got {cb!r}")
        self.stop_training = False
        for cb in callbacks:
            cb.on_train_begin(self)
        try:
            for epoch in range(1, int(epochs) + 1):
                for cb in callbacks:
                    cb.on_epoch_begin(self, epoch)
                record = self._train_epoch(train_loader, epoch, int(epochs), callbacks, progress)
                if val_loader is not None:
                    start = time.perf_counter()
                    val = self.evaluate(val_loader)
                    record.update({f"val_{k}": v for k, v in val.items()})
                    record["val_time_s"] = time.perf_counter() - start
                self.history.append(record)
                for cb in callbacks:
                    cb.on_epoch_end(self, epoch, record)
                if self.stop_training:
                    break
        finally:
            for cb in callbacks:
                cb.on_train_end(self)
        return self.history

    def _train_epoch(self, loader, epoch: int, epochs: int, callbacks, progress: bool) -> dict:
        self.model.train()
        bar = _progress_bar(loader, epoch, epochs) if progress else None
        memory = PeakMemory(self.device)
        memory.start()
        sums = dict.fromkeys(["loss", *self.metrics], 0.0)
        samples = batches = 0
        n_batches = len(loader) if hasattr(loader, "__len__") else None
        start = time.perf_counter()
        it = iter(loader)
        while True:
            with _region("data"):
                batch = next(it, _END)
                if batch is not _END:
                    batch = self._to_device(batch)
            if batch is _END:
                break
            last = n_batches is not None and batches == n_batches - 1
            for cb in callbacks:
                cb.on_batch_begin(self, batches)
            outputs, targets, loss = self._train_batch(batch, batches, last)
            n = _count(targets)
            loss_value = float(loss.item())
            sums["loss"] += self._loss_total(loss_value, n)
            for name, fn in self.metrics.items():
                sums[name] += fn(_array(outputs), _array(targets)) * n
            samples += n
            batches += 1
            memory.sample()
            logs = {"loss": loss_value, "batch": batches}
            for cb in callbacks:
                cb.on_batch_end(self, self.global_step, logs)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss_value:.4f}", refresh=False)
        if batches == 0:
            raise EveryOConfigError(
                f"the training loader yielded no batches in epoch {epoch}; check that its "
                f"dataset is not empty (and not smaller than batch_size with drop_last=True)"
            )
        if n_batches is None and batches % self.accumulate_steps:  # flush a partial accumulation
            self._optimizer_step()
        elapsed = time.perf_counter() - start
        if bar is not None:
            bar.close()
        record = {"epoch": epoch}
        record.update({k: v / max(samples, 1) for k, v in sums.items()})
        record.update(
            lr=self.optimizer.param_groups[0]["lr"],
            samples=samples,
            samples_per_s=samples / elapsed if elapsed > 0 else float("inf"),
            epoch_time_s=elapsed,
            mean_batch_time_ms=1000.0 * elapsed / max(batches, 1),
            **memory.result(),
        )
        return record

    def evaluate(self, loader) -> dict:
        """Mean loss and metrics over ``loader`` in eval mode without gradients; the model's
        previous train/eval mode is restored afterwards."""
        was_training = self.model.training
        self.model.eval()
        sums = dict.fromkeys(["loss", *self.metrics], 0.0)
        samples = 0
        try:
            with no_grad():
                for batch in loader:
                    inputs, targets = _split(self._to_device(batch))
                    if targets is None:
                        raise EveryOConfigError("evaluate() needs batches of (inputs, targets)")
                    outputs, loss = self._forward_loss(inputs, targets)
                    n = _count(targets)
                    sums["loss"] += self._loss_total(float(loss.item()), n)
                    for name, fn in self.metrics.items():
                        sums[name] += fn(_array(outputs), _array(targets)) * n
                    samples += n
        finally:
            self.model.train(was_training)
        if samples == 0:
            raise EveryOConfigError("evaluate() got a loader that yielded no batches")
        return {k: v / samples for k, v in sums.items()}

    def _loss_total(self, value: float, n: int) -> float:
        """The loss summed over a batch of ``n``: a ``reduction="sum"`` loss already is one."""
        return value if getattr(self.loss_fn, "reduction", "mean") == "sum" else value * n

    def predict(self, data, *, batch_size: int | None = None) -> Tensor:
        """Model outputs for a Tensor/array of inputs, or for every batch of a loader
        (concatenated), in eval mode without gradients (the previous mode is restored).

        ``batch_size`` runs an array/Tensor input in chunks of that many rows."""
        from everyo.core.ops import concatenate

        if batch_size is not None and (isinstance(data, Tensor) or hasattr(data, "shape")):
            n = int(data.shape[0])
            data = [(data[i : i + int(batch_size)],) for i in range(0, n, int(batch_size))]
        was_training = self.model.training
        self.model.eval()
        try:
            with no_grad():
                if isinstance(data, Tensor) or hasattr(data, "shape"):
                    return self.model(self._to_device(data))
                outs = []
                for batch in data:
                    inputs, _ = _split(self._to_device(batch))
                    outs.append(self.model(*inputs))
                return concatenate(outs, axis=0)
        finally:
            self.model.train(was_training)

    def predict_classes(self, data, *, batch_size: int | None = None) -> np.ndarray:
        """Predicted classes as an int64 NumPy array: the arg-max of the last axis, or, for
        one output per sample, ``output > 0.5`` (for probabilities, e.g. after a Sigmoid)."""
        out = self.predict(data, batch_size=batch_size).numpy()
        if out.ndim == 1 or out.shape[-1] == 1:
            return (out.reshape(len(out)) > 0.5).astype(np.int64)
        return out.argmax(axis=-1).astype(np.int64)


_END = object()


def _array(x):
    """A metric's argument: the tensor's array (NumPy on the CPU, CuPy on a GPU), so that metric
    functions written with NumPy work; other values pass through."""
    return x.data if isinstance(x, Tensor) else x


def _progress_bar(loader, epoch: int, epochs: int):
    from tqdm.auto import tqdm  # a widget in notebooks, text in terminals; imported on use

    total = len(loader) if hasattr(loader, "__len__") else None
    return tqdm(total=total, desc=f"epoch {epoch}/{epochs}", unit="batch", leave=True)
