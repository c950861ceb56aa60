"""Regions: ``record_function`` blocks, optimizer steps, ``zero_grad``, DataLoader batches and
LR scheduler steps.

torch marks its own optimizer steps (``Optimizer.step#SGD.step``), ``zero_grad`` calls and
DataLoader batches (``enumerate(DataLoader)#...__next__``) with
``torch.autograd.profiler.record_function`` blocks, inside ``with`` statements. So one patch
(that class's ``__enter__`` and ``__exit__``, which every import of it shares, ``from
torch.profiler import record_function`` done before the profile too) turns them and the user's
own blocks into everyo regions, named and kinded as the engine names its own: ``SGD.step``
(``"optimizer"``: it ends a training step), ``DataLoader.next`` (``"data"``: the time the loop
waited for the batch, worker processes included), a user's name (``"user"``). An exception
inside ``optimizer.step()`` leaves no region open: the ``with`` statement exits it. torch's own
``record_function`` still runs, so torch.profiler sees what it saw before.
"""

from __future__ import annotations

import sys

import torch
import torch.autograd.profiler as _autograd_profiler
import torch.optim.lr_scheduler as _lr_scheduler

from everyo.profiler.recording import hooks

_is_compiling = torch.compiler.is_compiling

_STEP = "Optimizer.step#"
_ZERO_GRAD = "Optimizer.zero_grad#"
_DATA = "enumerate(DataLoader)#"

_names: dict[str, tuple[str, str]] = {}  # record_function name -> (event name, everyo kind)


def region_of(name: str) -> tuple[str, str]:
    """``(name, kind)`` of the everyo region a ``record_function(name)`` block becomes."""
    hit = _names.get(name)
    if hit is None:
        if name.startswith(_STEP):  # "Optimizer.step#SGD.step"
            hit = (name[len(_STEP) :], "optimizer")
        elif name.startswith(_ZERO_GRAD):  # a step's bookkeeping: "train", not a step's end
            hit = (name[len(_ZERO_GRAD) :], "train")
        elif name.startswith(_DATA):
            hit = ("DataLoader.next", "data")
        else:
            hit = (name, "user")
        if len(_names) < 4096:  # (names made per call would grow it without end)
            _names[name] = hit
    return hit


def _patched(enter, exit_):
    def __enter__(self):
        # dynamo asked first: it must not read (and guard on) everyo's state while tracing
        p = None if _is_compiling() else hooks.active
        if p is not None:
            region = p.region(*region_of(self.name))
            caller = sys._getframe(1)  # the `with` statement: an interrupt's repair needs it
            region.frame = (caller, caller.f_lasti)
            region.__enter__()
            self._everyo_region = region
        return enter(self)

    def __exit__(self, exc_type, exc, tb):
        try:
            return exit_(self, exc_type, exc, tb)
        finally:
            region = self.__dict__.pop("_everyo_region", None)
            if region is not None:
                region.__exit__(exc_type, exc, tb)

    return __enter__, __exit__


def _scheduler_step(step):
    def scheduler_step(self, *args, **kwargs):
        p = None if _is_compiling() else hooks.active
        if p is None:
            return step(self, *args, **kwargs)
        with p.region(f"{type(self).__name__}.step", "train"):
            return step(self, *args, **kwargs)

    scheduler_step.__wrapped__ = step
    return scheduler_step


def _schedulers():
    """The LR scheduler classes that define their own ``step`` (the base and its overriders)."""
    seen, todo = [], [_lr_scheduler.LRScheduler]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in seen if "step" in vars(c)]


def install(patches) -> None:
    rf = _autograd_profiler.record_function
    enter, exit_ = _patched(rf.__enter__, rf.__exit__)
    patches.set(rf, "__enter__", enter)
    patches.set(rf, "__exit__", exit_)
    for cls in _schedulers():
        patches.set(cls, "step", _scheduler_step(vars(cls)["step"]))
