"""Op events with FLOPs (``record_ops``): torch's functions whose cost everyo already counts.

With ``record_ops`` the linear, convolution, matmul and attention functions run as the
recorder's ``op_call``, so each call is an ``op`` event with its FLOPs and bytes from everyo's
op table (:mod:`everyo.profiler.recording.flops`), under the module that made it: ``nn.Linear`` and
``nn.Conv2d`` call ``F.linear``/``F.conv2d`` through the module ``torch.nn.functional``, and
``nn.MultiheadAttention`` calls ``linear`` and ``scaled_dot_product_attention`` there too.
Other torch ops are not recorded one by one (torch.profiler records those).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from everyo.profiler.recording import hooks
from everyo.profiler.recording.flops import ATTENTION, CONV, LINEAR, MATMUL, declare

_is_compiling = torch.compiler.is_compiling

# (namespace, attribute, everyo op name): the op name is the engine's where it has the op
_OPS = (
    (F, "linear", declare("linear", LINEAR)),
    (F, "conv1d", declare("conv1d", CONV)),
    (F, "conv2d", declare("conv2d", CONV)),
    (F, "conv3d", declare("conv3d", CONV)),
    (F, "scaled_dot_product_attention", declare("scaled_dot_product_attention", ATTENTION)),
    (torch, "matmul", declare("matmul", MATMUL)),
    (torch, "mm", declare("mm", MATMUL)),
    (torch, "bmm", declare("bmm", MATMUL)),
)


def _op(name: str, fn):
    def op(*args, **kwargs):
        p = None if _is_compiling() else hooks.active  # (dynamo: see modules.py)
        if p is None or not p.record_ops:
            return fn(*args, **kwargs)
        return p.op_call(name, fn, args, kwargs)

    op.__wrapped__ = fn
    op.__name__ = getattr(fn, "__name__", name)
    op.__doc__ = getattr(fn, "__doc__", None)
    return op


def install(patches) -> None:
    for owner, attr, name in _OPS:
        patches.set(owner, attr, _op(name, getattr(owner, attr)))
