"""Subnormal floats flushed to zero while the engine runs a backward pass or an optimizer step.

Once a model fits its data, the loss's gradients fall below the smallest normal float
(``1.18e-38`` in float32) and IEEE arithmetic carries them on as subnormals, which x86 CPUs
compute tens to hundreds of times more slowly: one subnormal input makes a whole matrix product
slow. A training step then takes longer the longer the model has trained. The engine runs its
backward passes and optimizer steps with subnormal *results* written as zero (x86's FTZ bit);
subnormal inputs are read as they are, because the (IEEE) forward pass may save some for the
backward pass, and reading those as zero (DAZ) turned gradients that divide by them (``log``'s
``g / x``) into NaN (docs/engine.md, "Subnormal floats"). :func:`set_flush_denormal`
turns it off.

``begin()`` and ``end()`` are the engine's scope (``autograd.run_backward``, ``Optimizer.step``):
``begin()`` inside the ``try``, ``end()`` in its ``finally``. The CPU's mode is the calling
thread's, set by ``everyo/core/_cfloat.c``, which keeps the mode a scope replaced.
"""

from __future__ import annotations

from everyo import _compiled
from everyo.errors import EveryOConfigError

__all__ = ["set_flush_denormal", "flushing"]


def _keep_mode() -> None:
    return None


_cfloat = _compiled.load("everyo.core._cfloat")  # (where built and this CPU's mode can be set)
SUPPORTED = _cfloat is not None
"""Whether the flush-to-zero mode can be set here (the compiled extension is built and the CPU
is x86: AArch64's flush mode would read subnormal inputs as zero too)."""

begin = _cfloat.flush_begin if SUPPORTED else _keep_mode
# compiled even while the mode is off: a scope opened before it was switched off still closes
end = _cfloat.flush_end if SUPPORTED else _keep_mode


def _start_new_thread(function, args, kwargs=None):
    """``threading``'s thread start, which a thread started inside a scope goes through: the
    new thread is born with its creator's mode, flush-to-zero included, and would keep it for
    life (issue 44: its own NumPy code turned 1e-39 into 0); it first puts back the mode its
    creator had outside the scope."""
    outside = _cfloat.outside()
    if outside is None:
        return _plain_start(function, args, kwargs or {})

    def unscoped(*a, **k):
        _cfloat.unscoped(outside)
        return function(*a, **k)

    return _plain_start(unscoped, args, kwargs or {})


if SUPPORTED:
    import threading

    _plain_start = threading._start_new_thread
    threading._start_new_thread = _start_new_thread


def set_flush_denormal(mode: bool) -> bool:
    """Whether everyo's backward passes and optimizer steps write zero for subnormal results
    on the CPU (on by default; x86 only, inputs read as they are). Returns whether this
    machine supports it, as ``torch.set_flush_denormal`` does; where it does not, subnormals
    are computed as IEEE arithmetic specifies whatever ``mode`` says.

    The setting holds for every thread of the process, inside the engine's own backward passes
    and optimizer steps only: a model's forward pass and code of your own run in the mode their
    thread has. A thread started inside a backward pass or a step (with ``threading``) runs in
    the mode its creator had outside it. BLAS worker threads keep their own mode, so with
    several BLAS threads their share of a matrix product still computes subnormals at full
    cost.

    >>> import everyo as eo
    >>> supported = eo.set_flush_denormal(False)  # IEEE gradual underflow everywhere
    >>> supported == eo.set_flush_denormal(True)  # back to the default
    True
    """
    global begin
    if not isinstance(mode, bool):
        raise EveryOConfigError(f"set_flush_denormal takes True or False, got {mode!r}")
    begin = _cfloat.flush_begin if mode and SUPPORTED else _keep_mode
    return SUPPORTED


def flushing() -> bool:
    """Whether backward passes and optimizer steps flush subnormal results now (set and
    supported).

    >>> import everyo as eo
    >>> from everyo.core.float_mode import SUPPORTED, flushing
    >>> flushing() == SUPPORTED  # on by default where the machine supports it
    True
    """
    return begin is not _keep_mode
