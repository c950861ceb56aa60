"""Callbacks for :meth:`Trainer.fit`: ``EarlyStopping``, ``ModelCheckpoint`` and
``LearningRateScheduler`` (the learning-rate schedule hook).

A callback overrides any of ``on_train_begin(trainer)``, ``on_epoch_begin(trainer, epoch)``,
``on_batch_end(trainer, step, logs)``, ``on_epoch_end(trainer, epoch, logs)`` and
``on_train_end(trainer)``; setting ``trainer.stop_training = True`` ends ``fit`` after the epoch.
"""

from __future__ import annotations

import math
from pathlib import Path

from everyo.errors import EveryOConfigError

__all__ = ["Callback", "CallbackList", "EarlyStopping", "ModelCheckpoint", "LearningRateScheduler"]


class Callback:
    """Base class: every hook does nothing."""

    def on_train_begin(self, trainer) -> None:
        pass

    def on_epoch_begin(self, trainer, epoch: int) -> None:
        pass

    def on_batch_begin(self, trainer, batch: int) -> None:
        pass

    def on_batch_end(self, trainer, step: int, logs: dict) -> None:
        pass

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        pass

    def on_train_end(self, trainer) -> None:
        pass


class CallbackList(Callback):
    """Dispatch every hook to ``callbacks`` in order (reference EveryO's helper)."""

    def __init__(self, callbacks=()) -> None:
        self.callbacks = list(callbacks)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self) -> int:
        return len(self.callbacks)

    def _call(self, hook: str, *args) -> None:
        for cb in self.callbacks:
            getattr(cb, hook)(*args)

    def on_train_begin(self, trainer) -> None:
        self._call("on_train_begin", trainer)

    def on_epoch_begin(self, trainer, epoch: int) -> None:
        self._call("on_epoch_begin", trainer, epoch)

    def on_batch_begin(self, trainer, batch: int) -> None:
        self._call("on_batch_begin", trainer, batch)

    def on_batch_end(self, trainer, step: int, logs: dict) -> None:
        self._call("on_batch_end", trainer, step, logs)

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        self._call("on_epoch_end", trainer, epoch, logs)

    def on_train_end(self, trainer) -> None:
        self._call("on_train_end", trainer)


class _Monitor(Callback):
    def __init__(self, monitor: str, mode: str, min_delta: float = 0.0) -> None:
        if mode == "auto":
            mode = "max" if any(s in monitor for s in ("acc", "accuracy")) else "min"
        if mode not in ("min", "max"):
            raise EveryOConfigError(f"mode must be 'min', 'max' or 'auto', got {mode!r}")
        self.monitor, self.mode, self.min_delta = monitor, mode, abs(min_delta)
        self.best = math.inf if mode == "min" else -math.inf

    def _value(self, logs: dict) -> float:
        if logs.get(self.monitor) is None:
            raise EveryOConfigError(
                f"{type(self).__name__} monitors {self.monitor!r} but the epoch logs hold "
                f"{sorted(k for k, v in logs.items() if v is not None)}; pass val_loader= to "
                f"fit() or monitor 'loss'"
            )
        return float(logs[self.monitor])

    def _improved(self, value: float) -> bool:
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta


class EarlyStopping(_Monitor):
    """Stop when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs.

    ``restore_best_weights`` puts back the model state of the best epoch when stopping (or at
    the end of training). ``verbose`` prints one line when it stops training. (Keras'
    semantics; reference EveryO's differ: see docs/everyo-compat.md.)
    """

    def __init__(self, monitor: str = "val_loss", patience: int = 3, min_delta: float = 0.0,
                 mode: str = "auto", restore_best_weights: bool = False,
                 verbose: bool = False) -> None:  # fmt: skip
        super().__init__(monitor, mode, min_delta)
        if int(patience) < 0:
            raise EveryOConfigError(f"patience must be >= 0, got {patience}")
        self.patience, self.restore_best_weights = int(patience), restore_best_weights
        self.verbose = verbose
        self.wait, self.stopped_epoch, self.best_epoch = 0, None, None
        self._best_state = None

    def on_train_begin(self, trainer) -> None:
        self.best = math.inf if self.mode == "min" else -math.inf
        self.wait, self.stopped_epoch, self._best_state = 0, None, None

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        value = self._value(logs)
        if self._improved(value):
            self.best, self.best_epoch, self.wait = value, epoch, 0
            if self.restore_best_weights:
                self._best_state = {k: v.numpy() for k, v in trainer.model.state_dict().items()}
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            trainer.stop_training = True
            if self.verbose:
                print(f"EarlyStopping: {self.monitor} has not improved on {self.best:.4g} "
                      f"(epoch {self.best_epoch}) for {self.wait} epochs; stopping at epoch "
                      f"{epoch}")  # fmt: skip

    def on_train_end(self, trainer) -> None:
        if self.restore_best_weights and self._best_state is not None:
            trainer.model.load_state_dict(self._best_state)


class ModelCheckpoint(_Monitor):
    """Save the model with :func:`everyo.save` at the end of epochs.

    ``path`` may hold ``{epoch}`` and any log key (``"ckpt-{epoch}-{val_loss:.3f}.eo"``). With
    ``save_best_only`` (default) only epochs that improve ``monitor`` are saved.
    """

    def __init__(self, path, monitor: str = "val_loss", mode: str = "auto",
                 save_best_only: bool = True) -> None:  # fmt: skip
        super().__init__(monitor, mode)
        self.path, self.save_best_only = str(path), save_best_only
        self.saved: list[str] = []
        self.saved_epochs: list[int] = []

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        if self.save_best_only:
            value = self._value(logs)
            if not self._improved(value):
                return
            self.best = value
        from everyo.serialization import save

        target = self.path.format(epoch=epoch, **{k: v for k, v in logs.items() if k != "epoch"})
        written = save(trainer.model, Path(target), metadata=_json_safe({**logs, "epoch": epoch}))
        self.saved.append(str(written))
        self.saved_epochs.append(epoch)


def _json_safe(logs: dict) -> dict:
    return {k: v for k, v in logs.items() if isinstance(v, (int, float, str, bool, type(None)))}


def _takes_two(fn) -> bool:
    """Whether ``fn`` takes two positional arguments (reference EveryO's ``(epoch, lr)``)."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.kind in kinds and p.default is p.empty]
    return len(required) == 2


class LearningRateScheduler(Callback):
    """Drive the learning rate: ``schedule`` is an ``everyo.optim`` scheduler (its ``step()`` is
    called) or a function ``index -> lr``; ``interval`` is ``"epoch"`` or ``"step"``.

    With ``interval="step"`` the schedule advances once per *optimizer* step, so with
    ``Trainer(accumulate_steps=k)`` it advances once every ``k`` batches (and once for a
    partial accumulation flushed at the end of an epoch), not once per batch.

    A function of two arguments ``(epoch, lr) -> lr`` is reference EveryO's form: it is called
    at the start of every epoch with the 1-based epoch and the current rate; a returned rate
    <= 0 is an ``EveryOConfigError`` (a ``ValueError``).
    """

    def __init__(self, schedule, interval: str = "epoch") -> None:
        if interval not in ("epoch", "step"):
            raise EveryOConfigError(f"interval must be 'epoch' or 'step', got {interval!r}")
        if not (hasattr(schedule, "step") or callable(schedule)):
            raise TypeError(
                f"schedule must be an everyo.optim scheduler or a function, got "
                f"{type(schedule).__name__}"
            )
        self.schedule, self.interval = schedule, interval
        self._two_args = not hasattr(schedule, "step") and _takes_two(schedule)
        self._steps_seen: int | None = None  # the trainer's global_step at the last advance

    def on_epoch_begin(self, trainer, epoch: int) -> None:
        if not self._two_args:
            return
        lr = float(self.schedule(epoch, trainer.optimizer.param_groups[0]["lr"]))
        if not lr > 0:
            raise EveryOConfigError(
                f"the schedule returned lr={lr} for epoch {epoch}; a learning rate must be > 0"
            )
        for group in trainer.optimizer.param_groups:
            group["lr"] = lr

    def _apply(self, trainer, index: int) -> None:
        if self._two_args:  # the (epoch, lr) form runs in on_epoch_begin only
            return
        if hasattr(self.schedule, "step"):
            self.schedule.step()
            return
        lr = float(self.schedule(index))
        for group in trainer.optimizer.param_groups:
            group["lr"] = lr

    def _follow_steps(self, trainer) -> None:
        """Advance once per optimizer step taken since the last call (batches that only
        accumulated gradients took none)."""
        if self._steps_seen is None:
            self._steps_seen = trainer.global_step - 1
        while self._steps_seen < trainer.global_step:
            self._steps_seen += 1  # `global_step` steps taken: the next index is `global_step`
            self._apply(trainer, self._steps_seen)

    def on_train_begin(self, trainer) -> None:
        self._steps_seen = trainer.global_step
        if not hasattr(self.schedule, "step"):  # a function sets epoch 0's rate up front
            self._apply(trainer, 0)

    def on_batch_end(self, trainer, step: int, logs: dict) -> None:
        if self.interval == "step":
            self._follow_steps(trainer)

    def on_epoch_end(self, trainer, epoch: int, logs: dict) -> None:
        if self.interval == "step":  # the epoch's flushed partial accumulation, if any
            self._follow_steps(trainer)
        else:  # epochs are numbered from 1: the next index is `epoch`
            self._apply(trainer, epoch)
