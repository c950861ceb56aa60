"""The bridge between the engine and the profiler.

The engine's call sites read one module attribute, ``hooks.active``. When it is ``None`` (no
profiler running) that check is the whole cost. When a profiler is running, the call site hands
the work to it through the small protocol below, and the profiler times and records it.

The protocol (implemented by :class:`everyo.profiler.Profiler`)::

    p.module_call(module, forward, args, kwargs)
        # Module.__call__: returns forward(*args, **kwargs)
    p.region(name, kind, **metadata)
        # a context manager timing one region; kind in {"user", "optimizer", "data", "train"}
    p.record_ops
        # bool: op-level events wanted
    p.op_call(name, fn, args, kwargs)
        # op dispatch when record_ops: returns fn(*args, **kwargs)
    p.scope()
        # opaque token stored on autograd nodes made while profiling (their module path)
    p.backward_call(run, *args)
        # Tensor.backward: returns run(*args) (the arguments passed on, not bound in a closure:
        # no function object is made per pass)
    p.backward_node(scope, name, fn)
        # one autograd node's backward: returns fn()
    p.backward_groups()
        # optional: enter(node) of the backward pass running on this thread, or None;
        # run_backward then calls enter(node) before each node and runs the nodes itself (no
        # backward_node call per node); a group opens where node.scope (or node.name outside
        # any module) changes

Engine code looks like::

    from everyo.profiler.recording import hooks as _hooks
    def __call__(self, *args, **kwargs):
        p = _hooks.active
        if p is None:
            return self._call(*args, **kwargs)
        return p.module_call(self, self._call, args, kwargs)

This module must stay import-light: the engine imports it at import time.

Where the engine's extension is built, ``Module.__call__`` itself is C (``everyo.nn._cmodule``):
the engine binds it to this module's globals (where it reads ``active``) and to
:func:`module_call_api`, through which it enters a compiled recorder without a Python frame; any
other hook object gets ``module_call`` by name.
"""

from __future__ import annotations

import threading

from everyo import _compiled

active = None
"""The running profiler, or ``None``. Only :mod:`everyo.profiler` assigns it."""

_claimed = None  # the profiler between claim() and release(): starting, running or stopping
_claim_lock = threading.Lock()


def claim(profiler):
    """Reserve the one profiler slot for ``profiler``; return the holder if another has it.

    Checking that no profiler runs and becoming the one that runs are one atomic step, so
    profilers started at the same moment from several threads cannot both start.
    """
    global _claimed
    with _claim_lock:
        holder = _claimed
        if holder is not None and holder is not profiler:
            return holder
        _claimed = profiler
        return None


def holder():
    """The profiler holding the slot (starting, running or stopping), or ``None``."""
    return _claimed


def release(profiler) -> None:
    """Give the slot back (after uninstalling the profiler's hook object)."""
    global _claimed
    with _claim_lock:
        if _claimed is profiler:
            _claimed = None


def module_call_api():
    """The compiled recorder's module-call contract for the engine's compiled
    ``Module.__call__``: a capsule named ``everyo.profiler.recording._crecorder.module_call_api``
    (``profiler/recording/module_call_api.h``: a version and ``module_call`` as a C function), or
    ``None`` where the recorder is not compiled; then every profiler gets ``module_call`` by name.
    """
    c = _compiled.load("everyo.profiler.recording._crecorder")
    return None if c is None else c.module_call_api


tensor_type = None
"""The engine's tensor class (``everyo.core.tensor`` registers it with :func:`set_tensor_type`):
the recorder reads a tensor's shape from its array without the Python property."""


def set_tensor_type(cls) -> None:
    """Tell the recorder which class is the engine's tensor (its ``data`` is the array)."""
    global tensor_type
    tensor_type = cls


def set_active(profiler) -> None:
    """Install (or with ``None`` remove) the running profiler.

    Profilers go through :func:`claim`/:func:`release`; tests and engine fakes that install
    a hook object directly use this.
    """
    global active
    active = profiler
