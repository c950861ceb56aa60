"""The recording contract: the one narrow meeting point of the recorder's policy (Python) and its
module-call primitives (compiled ``_crecorder.ModuleCall``, or its pure-Python twin
``py_recorder.PyModuleCall``).

Python sets what the primitives read only through ``configure(**options)``, whose names and
rules are :data:`OPTIONS` (checked by :func:`check_options` on the Python twin and by the same
rules, with the same messages, in C; the compiled members are read-only). The primitives call
back only the methods in :data:`C_CALLBACKS`. ``tests/profiler/test_recording_contract.py``
holds both sides to this.
"""

from __future__ import annotations

import sys

OPTIONS = {
    "clock": "the recorder's clock: a callable returning integer nanoseconds",
    "tensor": "the engine's tensor class (its ``data`` is the array), or None",
    "mode": "0: every module event through _emit_call; 1: appended without shapes; "
    "2: appended with shape ids (the single-input cache)",
    "fast": "regions and backward groups append straight to the buffer",
    "general": "module_call is the general Python path (the module-call API calls it by name)",
    "python_roots": "every outermost module call goes through _root_call (else a known root's "
    "keymap is found without Python)",
    "flush_len": "a thread's buffer is flushed at this many values",
    "max_depth": "deepest nesting of events on one thread (the store keeps depth as int16)",
    "region_keys": "(kind, name) -> store key, shared with the policy",
    "roots": "id(outermost module) -> its keymap, shared with the policy",
    "bw_keys": "backward group token -> store key, shared with the policy",
    "backward_region": "(kind, name) of a backward pass's event",
}
"""What ``configure`` takes, each once; the primitives read nothing else of the policy."""

C_CALLBACKS = (
    "_new_state",  # a thread's first event: its ThreadState
    "_root_call",  # an outermost module whose keymap is not made yet (or python_roots)
    "_unlisted",  # a module missing from the keymap
    "_shape_id",  # a shape not in the single-input cache
    "_failed",  # a call that raised, in mode 0
    "_emit_call",  # a module event in mode 0 (warmup, schedule, stopped)
    "_emit_region",  # a region or backward group while not `fast`
    "_keep_anyway",  # an event an interrupt kept from the policy, while not `fast`
    "_flush",  # a thread's buffer is full or old
    "_region_key",  # a (kind, name) seen for the first time
    "_region_too_deep",  # the depth limit's error
    "_bw_key",  # a backward group's key seen for the first time
)
"""The recorder's Python methods the primitives call by name: with ``regions.close_out_of_order``
and ``regions.close_abandoned`` (bound at import, with ``own_errors.raised_by_signal_handler``,
which tells the program's exception from a shape read's own), the whole of what C asks of
Python."""

MODES = (0, 1, 2)
MAX_DEPTH_LIMIT = 32767


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_in(lo: int, hi: int, what: str):
    def check(name, v):
        if not _is_int(v):
            return TypeError(f"configure: {name} must be {what}, not {type(v).__name__}")
        if v < lo or v > hi:
            return ValueError(f"configure: {name} must be {what}, not {v!r}")
        return None

    return check


def _typed(test, what: str):
    def check(name, v):
        if test(v):
            return None
        return TypeError(f"configure: {name} must be {what}, not {type(v).__name__}")

    return check


def _pair(v) -> bool:
    return type(v) is tuple and len(v) == 2 and all(isinstance(x, str) for x in v)


_RULES = {
    "clock": _typed(callable, "a callable"),
    "tensor": _typed(lambda v: v is None or isinstance(v, type), "a class or None"),
    "mode": _int_in(0, 2, "0, 1 or 2"),
    "fast": _typed(lambda v: type(v) is bool, "True or False"),
    "general": _typed(lambda v: type(v) is bool, "True or False"),
    "python_roots": _typed(lambda v: type(v) is bool, "True or False"),
    "flush_len": _int_in(1, sys.maxsize, "an int from 1 to sys.maxsize"),
    "max_depth": _int_in(1, MAX_DEPTH_LIMIT, "an int from 1 to 32767"),
    "region_keys": _typed(lambda v: isinstance(v, dict), "a dict"),
    "roots": _typed(lambda v: isinstance(v, dict), "a dict"),
    "bw_keys": _typed(lambda v: isinstance(v, dict), "a dict"),
    "backward_region": _typed(_pair, "a (kind, name) tuple of two str"),
}
assert _RULES.keys() == OPTIONS.keys()


def check_options(options: dict) -> dict:
    """``options`` when every name is in :data:`OPTIONS` and every value keeps its rule; else the
    ``TypeError`` or ``ValueError`` the compiled ``configure`` raises for the first bad one."""
    for name, value in options.items():
        rule = _RULES.get(name)
        if rule is None:
            raise TypeError(f"configure: unknown option {name!r}")
        error = rule(name, value)
        if error is not None:
            raise error
    return options


def check_call_args(args, kwargs) -> tuple:
    """``module_call``'s ``(args, kwargs)`` as the compiled recorder takes them: a tuple, and
    ``None`` or a mapping (made a dict, ``{}`` for ``None``); anything else is a
    ``TypeError``, on both paths."""
    if not isinstance(args, tuple):
        raise TypeError(f"module_call: args must be a tuple, not {type(args).__name__}")
    if kwargs is None:
        return args, {}
    if type(kwargs) is dict:
        return args, kwargs
    if not hasattr(kwargs, "keys"):
        raise TypeError(
            f"module_call: kwargs must be a mapping or None, not {type(kwargs).__name__}"
        )
    return args, {k: kwargs[k] for k in kwargs.keys()}
