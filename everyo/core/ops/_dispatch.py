"""The single dispatch point every op goes through.

With no profiler recording ops, the cost is one attribute read and one comparison; with
``Profiler(record_ops=True)`` the profiler times the op and derives FLOPs and bytes from its
name and inputs.
"""

from __future__ import annotations

from everyo.profiler import hooks as _hooks


def dispatch(name: str, impl, *args, **kwargs):
    """Run ``impl(*args, **kwargs)`` as the op ``name``."""
    p = _hooks.active
    if p is not None and p.record_ops:
        return p.op_call(name, impl, args, kwargs)
    return impl(*args, **kwargs)
