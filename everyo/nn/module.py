"""``Module``: the base class of layers and models.

Parameters, buffers and submodules are registered by attribute assignment. ``module(x)`` runs
``forward`` through the profiler's one hook point: with no profiler active it costs one check of
``hooks.active`` (plus one of the module's hook flag). ``__call__`` is compiled C
(:data:`ModuleBase`, from ``everyo/nn/_cmodule.c``) where that extension is built, else
``_PyModuleCall`` below.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from everyo import _compiled
from everyo.core.autograd import zero_grads
from everyo.core.device import device as _resolve
from everyo.core.tensor import Tensor, as_tensor
from everyo.errors import EveryOSerializationError, EveryOShapeError
from everyo.nn.parameter import Parameter
from everyo.profiler.recording import hooks as _hooks

__all__ = ["Module"]

_NO_ARG = object()  # marks "no positional argument" in Module.__call__


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict(strict=False)`` could not match."""

    missing_keys: list
    unexpected_keys: list


class HookHandle:
    """Returned by ``register_forward_*hook``; ``remove()`` unregisters the hook."""

    def __init__(self, module: Module, registry: dict, key: int) -> None:
        self._module, self._registry, self._key = module, registry, key

    def remove(self) -> None:
        self._registry.pop(self._key, None)
        self._module._refresh_hooked()


class _PyModuleCall:
    """``Module.__call__`` in Python, where the compiled one (:data:`ModuleBase`, the same
    logic in C) is not available."""

    def __call__(self, x=_NO_ARG, /, *args, **kwargs):
        # One positional argument is the common case: taking it by name and calling forward(x)
        # with a fixed arity halves the cost of forwarding *args/**kwargs.
        p = _hooks.active
        if p is None:
            if self._hooked or args or kwargs or x is _NO_ARG:
                return self._call_impl(*(args if x is _NO_ARG else (x, *args)), **kwargs)
            return self.forward(x)
        # without hooks, hand the profiler forward itself: one frame less per recorded event
        forward = self._call_impl if self._hooked else self.forward
        if args or x is _NO_ARG:
            return p.module_call(self, forward, args if x is _NO_ARG else (x, *args), kwargs)
        return p.module_call(self, forward, (x,), kwargs)  # a tuple display: no list built


def _compiled_call():
    """The compiled ``Module.__call__`` bound to what it reads, ``hooks.active`` (in the hooks'
    namespace) and the recorder's module-call contract (:func:`hooks.module_call_api`), with
    the name of the path it takes; ``(None, "python")`` without it."""
    _cmodule = _compiled.load("everyo.nn._cmodule")
    if _cmodule is None:
        return None, "python"
    direct = _cmodule.bind(vars(_hooks), _hooks.module_call_api())
    return _cmodule.ModuleBase, "c" if direct else "c, module_call by name"


ModuleBase, IMPLEMENTATION = _compiled_call()
"""``ModuleBase`` is the compiled ``Module.__call__`` (a base class), or ``None`` where
``everyo/nn/_cmodule.c`` is not in use (:mod:`everyo._compiled` says why): then ``Module`` uses
``_PyModuleCall``, which does the same. ``IMPLEMENTATION`` says which path a module call takes:
``"c"`` (a compiled recorder is entered directly), ``"c, module_call by name"`` (the compiled
recorder is missing or its contract is of another version: every profiler gets ``module_call``
by name) or ``"python"``."""


class Module(ModuleBase or _PyModuleCall):
    """Base class of every layer and model.

    Subclasses call ``super().__init__()`` first, assign parameters, buffers (via
    :meth:`register_buffer`) and submodules as attributes, and define ``forward``.

    >>> import everyo as eo
    >>> class Tiny(eo.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = eo.Linear(3, 2, seed=0)
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> m = Tiny()
    >>> [name for name, _ in m.named_parameters()]
    ['fc.weight', 'fc.bias']
    >>> m(eo.zeros(4, 3)).shape
    (4, 2)
    """

    _hook_counter = 0

    def __init__(self) -> None:
        d = self.__dict__
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = {}
        d["_forward_hooks"] = {}
        d["_hooked"] = False
        d["training"] = True

    # ---- calling ----------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def _call_impl(self, *args, **kwargs):
        """Pre-hooks, ``forward``, post-hooks: what a profiler times as this module's call."""
        if not self._hooked:
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            changed = hook(self, args, out)
            if changed is not None:
                out = changed
        return out

    def register_forward_pre_hook(self, hook: Callable) -> HookHandle:
        """Call ``hook(module, args)`` before ``forward``; a non-None result replaces ``args``."""
        return self._add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable) -> HookHandle:
        """Call ``hook(module, args, output)`` after ``forward``; a non-None result replaces the
        output."""
        return self._add_hook(self._forward_hooks, hook)

    def _add_hook(self, registry: dict, hook: Callable) -> HookHandle:
        Module._hook_counter += 1
        registry[Module._hook_counter] = hook
        self._refresh_hooked()
        return HookHandle(self, registry, Module._hook_counter)

    def _refresh_hooked(self) -> None:
        self.__dict__["_hooked"] = bool(self._forward_pre_hooks or self._forward_hooks)

    # ---- registration -----------------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(
                f"cannot assign {name!r} before Module.__init__() ran: call super().__init__() "
                f"first in {type(self).__name__}.__init__"
            )
        params, buffers, modules = d["_parameters"], d["_buffers"], d["_modules"]
        if isinstance(value, Parameter):
            buffers.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"buffer {name!r} must be a Tensor or None")
            buffers[name] = value
        elif name in params and value is None:
            params[name] = None
        else:
            params.pop(name, None)
            modules.pop(name, None)
        d[name] = value

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        self._non_persistent.discard(name)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register state that is not a parameter (e.g. BatchNorm's running mean).

        Persistent buffers are part of :meth:`state_dict`; all buffers move with :meth:`to`.
        """
        if tensor is not None and not isinstance(tensor, Tensor):
            tensor = as_tensor(tensor)
        self._parameters.pop(name, None)
        self._modules.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        self.__dict__[name] = tensor

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or ``None``, a declared but absent parameter) under ``name``."""
        if param is None:
            self._parameters[name] = None
            self.__dict__[name] = None
        else:
            setattr(self, name, param if isinstance(param, Parameter) else Parameter(param))

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as a child under ``name`` (names may be digits, as in Sequential)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{name!r} must be a Module, not {type(module).__name__}")
        if module is None:
            self._modules[name] = None
            self.__dict__[name] = None
        else:
            setattr(self, name, module)

    register_module = add_module

    # ---- traversal --------------------------------------------------------------------------
    def named_children(self) -> Iterator[tuple[str, Module]]:
        for name, m in self._modules.items():
            if m is not None:
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """``(path, module)`` for this module (path ``""``) and every descendant, depth first,
        with dotted paths such as ``encoder.layers.0.attn``; each module once."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            path, m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield path, m
            kids = [(f"{path}.{n}" if path else n, c) for n, c in m.named_children()]
            stack.extend(reversed(kids))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def _named_members(self, kind: str, recurse: bool, prefix: str = ""):
        seen: set[int] = set()
        pairs = self.named_modules(prefix) if recurse else [(prefix, self)]
        for path, m in pairs:
            for name, value in m.__dict__[kind].items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{path}.{name}" if path else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True):
        """``(dotted name, Parameter)`` pairs, each parameter once (shared ones not repeated)."""
        return self._named_members("_parameters", recurse, prefix)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        return self._named_members("_buffers", recurse, prefix)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def num_parameters(self, trainable_only: bool = False) -> int:
        """The number of scalar parameters (only those requiring grad with ``trainable_only``)."""
        return sum(p.size for p in self.parameters() if p.requires_grad or not trainable_only)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first) and then on this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ----------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout active, BatchNorm using batch statistics) recursively."""
        for m in self.modules():
            m.__dict__["training"] = bool(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: the same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = requires_grad
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient (``None``, or zeros with ``set_to_none=False``)."""
        zero_grads(self.parameters(), set_to_none)

    # ---- devices ----------------------------------------------------------------------------
    def to(self, device=None, dtype=None) -> Module:
        """Move (and/or cast) parameters, their gradients and buffers, in place; returns self.

        Floating parameters and buffers are cast by ``dtype``; integer buffers keep theirs.
        """
        dev = None if device is None else _resolve(device)
        for m in self.modules():
            for p in m._parameters.values():
                if p is not None:
                    _move(p, dev, dtype)
                    if p.grad is not None:
                        _move(p.grad, dev, dtype)
            for b in m._buffers.values():
                if b is not None:
                    _move(b, dev, dtype)
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self) -> Module:
        return self.to("cuda")

    # ---- state ------------------------------------------------------------------------------
    def state_dict(self) -> OrderedDict:
        """Parameters and persistent buffers by dotted name, as tensors sharing this module's
        memory (save them with :func:`everyo.save`)."""
        out: OrderedDict = OrderedDict()
        for path, m in self.named_modules():
            pre = f"{path}." if path else ""
            for name, p in m._parameters.items():
                if p is not None:
                    out[pre + name] = p.detach()
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent:
                    out[pre + name] = b.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values into the parameters and buffers, in place (keeping their device/dtype).

        With ``strict`` (default) missing or unexpected keys raise
        :class:`EveryOSerializationError`; a shape mismatch always raises
        :class:`EveryOShapeError`.
        """
        _check_state_mapping(self, state_dict)
        own = self.state_dict()
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append(f"missing keys {_short(missing)}")
            if unexpected:
                parts.append(f"unexpected keys {_short(unexpected)}")
            raise EveryOSerializationError(
                f"load_state_dict into {type(self).__name__}: {' and '.join(parts)}; the state "
                f"was saved from a different architecture (pass strict=False to load the rest)"
            )
        for key, target in own.items():
            if key not in state_dict:
                continue
            src = as_tensor(state_dict[key]).detach()  # Tensors pass as they are: no copy
            if src.shape != target.shape:
                raise EveryOShapeError(
                    f"load_state_dict: {key!r} has shape {src.shape} in the state but "
                    f"{target.shape} in the model; the architectures differ"
                )
            target.data[...] = src.to(target.device).data.astype(target.dtype, copy=False)
        return IncompatibleKeys(missing, unexpected)

    # ---- printing ---------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside ``Name(...)`` in the repr (layers describe their configuration)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines.extend(extra.split("\n"))
        for name, child in self.named_children():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        if not lines:
            return f"{type(self).__name__}()"
        if not self._modules and len(lines) == 1:
            return f"{type(self).__name__}({lines[0]})"
        inner = "\n  ".join(lines)
        return f"{type(self).__name__}(\n  {inner}\n)"


def _move(t: Tensor, dev, dtype) -> None:
    """Move/cast ``t``'s data in place so references to it (optimizers, state) stay valid."""
    if dtype is not None and t.dtype.kind == "f":
        t.data = t.detach().to(dtype=dtype).data
    if dev is not None and dev != t._device:
        moved = t.detach().to(dev)
        t.data, t._device = moved.data, moved._device


def _check_state_mapping(module: Module, state) -> None:
    """Raise a TypeError naming what was passed unless ``state`` is a mapping of names."""
    if isinstance(state, Mapping):
        return
    if isinstance(state, Module):
        hint = "pass its state instead: load_state_dict(other.state_dict())"
    elif isinstance(state, (str, os.PathLike)):
        hint = f"read the file first: load_state_dict(eo.load({os.fspath(state)!r}))"
    else:
        hint = "e.g. the dict of model.state_dict(), or eo.load(path) of a saved state"
    shown = repr(state)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise TypeError(
        f"load_state_dict into {type(module).__name__} expects a dict of parameter and buffer "
        f"names to arrays, got {type(state).__name__} {shown}; {hint}"
    )


def _short(keys: list) -> str:
    shown = ", ".join(repr(k) for k in keys[:5])
    return f"[{shown}{', ...' if len(keys) > 5 else ''}] ({len(keys)})"
