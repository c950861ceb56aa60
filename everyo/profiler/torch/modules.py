"""Forward events: ``torch.nn.Module.__call__`` routed through the recorder's ``module_call``.

While a profile runs, ``nn.Module.__call__`` is a function that hands the call to the running
recorder's ``module_call`` (compiled where ``_crecorder`` was built), the same entry the engine's
own modules use, so a torch module's event has its class name, its path among the outermost
module's ``named_modules()`` and, with ``record_shapes``, its shapes. No hook of torch's is
registered: a global module hook moves every call onto torch's slow path (PYTORCH_NOTES).
"""

from __future__ import annotations

import sys

import torch
from torch import nn

from everyo.profiler.recording import hooks, keymaps

_is_compiling = torch.compiler.is_compiling


def module_call(wrapped, synchronize=None):
    """The ``nn.Module.__call__`` installed while profiling, calling ``wrapped`` (torch's own)
    when no recorder runs or while dynamo traces (it must never trace into the recorder: asked
    first, so that no guard on everyo's state enters a compiled graph).

    ``synchronize``: called before and after each module with a CUDA device in use
    (``torch_sync``), so that a module's event holds its GPU work rather than its launches.
    """
    if synchronize is None:

        def __call__(self, *args, **kwargs):
            if _is_compiling():
                return wrapped(self, *args, **kwargs)
            p = hooks.active
            if p is None:
                return wrapped(self, *args, **kwargs)
            impl = self._compiled_call_impl
            return p.module_call(self, self._call_impl if impl is None else impl, args, kwargs)

        return __call__

    def __call__(self, *args, **kwargs):  # noqa: F811 - the synchronising variant
        if _is_compiling():
            return wrapped(self, *args, **kwargs)
        p = hooks.active
        if p is None:
            return wrapped(self, *args, **kwargs)
        impl = self._compiled_call_impl
        forward = self._call_impl if impl is None else impl

        def synced(*a, **k):
            out = forward(*a, **k)
            synchronize()  # the module's GPU work ends inside its event
            return out

        synchronize()  # work queued before the module is not its own
        return p.module_call(self, synced, args, kwargs)

    return __call__


def _compiled_label(module) -> str:
    inner = getattr(module, "_orig_mod", None)
    return f"compiled {type(inner).__name__ if inner is not None else 'module'}"


def _scripted_label(module) -> str:
    name = getattr(module, "original_name", None) or type(module).__name__
    return f"scripted {name}"


def label_classes() -> dict:
    """Event names of torch's compiled wrappers (``compiled Net``, ``scripted Net``): each
    runs its whole model as one opaque call, and its class name alone would not say so. (By
    class name: importing dynamo to name its class would cost seconds.)"""
    return {
        "torch._dynamo.eval_frame.OptimizedModule": _compiled_label,
        "torch.jit._script.RecursiveScriptModule": _scripted_label,
        "torch.jit._script.ScriptModule": _scripted_label,
    }


# modules that keep torch's own `nn.Module.__call__`, read once as they are imported (dynamo,
# imported lazily by a first torch.compile, which may come while a profile runs)
_KEEPERS = (
    ("torch._dynamo.utils", "unpatched_nn_module_call"),
    ("torch._dynamo.variables.nn_module", "unpatched_nn_module_call"),
)


def install(patches, synchronize=None) -> None:
    """Route every ``nn.Module`` call through the recorder and name the compiled wrappers."""
    patches.set(nn.Module, "__call__", module_call(nn.Module.__call__, synchronize))
    patches.set(keymaps, "LABELS", {**keymaps.LABELS, **label_classes()})


def forget(patched) -> None:
    """After ``nn.Module.__call__`` is torch's again: where a module imported while it was
    ``patched`` kept that as torch's own, give it torch's (else dynamo would no longer know an
    unmodified module call, and trace more of it)."""
    for name, attr in _KEEPERS:
        mod = sys.modules.get(name)
        if mod is not None and getattr(mod, attr, None) is patched:
            setattr(mod, attr, vars(nn.Module)["__call__"])
