"""``Optimizer``: parameter groups, ``zero_grad``, state dicts; ``step()`` calls ``_step()``.

Subclasses implement ``_step()`` and update ``p.data`` in place with the parameters' own array
namespace (NumPy or CuPy), so updates run where the parameters live and record no graph.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from everyo.core import float_mode as _float_mode
from everyo.core.autograd import enable_grad, zero_grads
from everyo.core.backend import is_cupy_array
from everyo.core.tensor import Tensor
from everyo.errors import (
    EveryOConfigError,
    EveryODTypeError,
    EveryOSerializationError,
    EveryOShapeError,
)
from everyo.profiler.recording import hooks as _hooks

__all__ = ["Optimizer"]

_STEP_REGION = "_everyo_step_region"  # on each optimizer class: "<ClassName>.step"


def _new_step_region(cls: type) -> str:
    """The region name of ``cls.step``, made once per class and kept in the class's own
    namespace (``step`` reads it there: a string built per step was new each time, and the
    recorder hashed it afresh to find the region's key). Kept on the class, not in a table of
    classes, so that a class defined again in a notebook does not keep the old one alive."""
    name = f"{cls.__name__}.step"
    try:
        setattr(cls, _STEP_REGION, name)
    except (AttributeError, TypeError):  # a class that refuses attributes: built per step
        pass
    return name


class Optimizer:
    """Base class of the optimizers.

    Parameters
    ----------
    params : iterable of Tensors, or of dicts
        The tensors to optimise, or parameter groups: dicts with a ``"params"`` list and
        per-group overrides of the defaults (e.g. ``{"params": head, "lr": 1e-2}``).
    defaults : dict, or a number
        Hyper-parameters every group starts from. A number is the learning rate (reference
        EveryO's ``Optimizer(parameters, lr)``; it must be > 0).

    Reference EveryO's attributes work too: ``lr`` (reads the first group's, sets every
    group's), ``parameters`` (the list of tensors), ``step_count`` (``step()`` calls),
    ``state_for(param)`` and ``get_config()``. A subclass may override ``step()`` itself.
    """

    def __init__(self, params: Iterable, defaults: dict[str, Any] | float) -> None:
        if not isinstance(defaults, dict):  # reference EveryO: Optimizer(parameters, lr)
            if float(defaults) <= 0:
                raise ValueError(f"lr must be > 0, got {defaults}")
            defaults = {"lr": float(defaults)}
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self.state: dict[int, dict] = {}  # keyed by id(param): Tensors are hashed by identity
        self.step_count = 0
        groups = list(params)
        if not groups:
            raise EveryOConfigError(
                "optimizer got an empty parameter list; pass model.parameters()"
            )
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        """Add a group of parameters with its own hyper-parameters."""
        group = dict(group)
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for p in params:
            if not isinstance(p, Tensor):
                raise EveryODTypeError(
                    f"optimizers take everyo Tensors, got {type(p).__name__}; pass "
                    f"model.parameters()"
                )
            if id(p) in seen:
                raise ValueError("a parameter appears in two parameter groups")
            if p.dtype.kind != "f":
                raise ValueError(f"cannot optimise a tensor of dtype {p.dtype}")
        group["params"] = params
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    # ---- stepping ---------------------------------------------------------------------------
    def step(self, closure: Callable[[], Any] | None = None):
        """Update the parameters from their ``.grad`` (parameters without one are skipped).

        ``closure``, if given, re-evaluates the model and returns the loss (called with
        gradients enabled); ``step`` returns that loss.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self.step_count += 1
        p = _hooks.active
        try:
            _float_mode.begin()  # subnormals as zero: everyo.core.float_mode
            if p is None:
                self._step()
            else:
                cls = type(self)
                name = cls.__dict__.get(_STEP_REGION) or _new_step_region(cls)
                with p.region(name, "optimizer"):
                    self._step()
        finally:
            _float_mode.end()
        return loss

    def _step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _step()")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the gradients of every parameter this optimizer holds."""
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def _state_for(self, p: Tensor) -> dict:
        st = self.state.get(id(p))
        if st is None:
            st = self.state[id(p)] = {}
        return st

    state_for = _state_for  # reference EveryO's name

    # ---- reference EveryO's single-group view ------------------------------------------------
    @property
    def lr(self) -> float:
        """The learning rate of the first group; setting it sets every group's."""
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        for group in self.param_groups:
            group["lr"] = float(value)

    @property
    def parameters(self) -> list[Tensor]:
        """Every parameter this optimizer holds, in order."""
        return self._params()

    def get_config(self) -> dict:
        """The hyper-parameters (``{"lr": ...}`` plus the subclass's), current learning rate."""
        return {**self.defaults, "lr": self.lr}

    # ---- state ------------------------------------------------------------------------------
    def _params(self) -> list[Tensor]:
        return [p for g in self.param_groups for p in g["params"]]

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [...]}`` with parameters as indices in the
        order they were given; arrays are host copies (savable with :func:`everyo.save`)."""
        index = {id(p): i for i, p in enumerate(self._params())}
        state = {}
        for pid, st in self.state.items():
            if pid in index:
                state[index[pid]] = {k: _host(v) for k, v in st.items()}
        groups = []
        for g in self.param_groups:
            out = {k: v for k, v in g.items() if k != "params"}
            out["params"] = [index[id(p)] for p in g["params"]]
            groups.append(out)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore hyper-parameters and per-parameter state saved by :meth:`state_dict`."""
        try:
            groups, state = state_dict["param_groups"], state_dict["state"]
        except (KeyError, TypeError) as exc:
            raise EveryOSerializationError(
                f"not an optimizer state dict: got {type(state_dict).__name__}, expected the "
                f"dict of optimizer.state_dict() with 'state' and 'param_groups' keys"
            ) from exc
        if len(groups) != len(self.param_groups) or any(
            len(a["params"]) != len(b["params"]) for a, b in zip(groups, self.param_groups)
        ):
            raise EveryOSerializationError(
                "optimizer state does not fit: its parameter groups have different sizes than "
                "this optimizer's (was it saved for another model?)"
            )
        params = self._params()
        for saved, group in zip(groups, self.param_groups):
            for k, v in saved.items():
                if k != "params":
                    group[k] = copy.deepcopy(v)
        self.state = {}
        for key, st in state.items():
            p = params[int(key)]
            self.state[id(p)] = {k: _to_param(v, p) for k, v in st.items()}

    def __getstate__(self) -> dict:
        # pickle and copy.deepcopy: ``state`` is keyed by id(param), which the copied parameters
        # do not share, so it is saved by the parameters' positions and keyed again on loading
        # (keyed by the old ids, a copied Adam restarted its moments without a word)
        out = dict(self.__dict__)
        index = {id(p): i for i, p in enumerate(self._params())}
        out["state"] = {index[pid]: st for pid, st in self.state.items() if pid in index}
        out["_state_by_position"] = True
        return out

    def __setstate__(self, saved: dict) -> None:
        saved = dict(saved)
        by_position = saved.pop("_state_by_position", False)  # (absent: pickled before)
        self.__dict__.update(saved)
        if by_position:
            params = self._params()
            self.state = {id(params[i]): st for i, st in saved["state"].items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for k in sorted(g):
                if k != "params":
                    lines.append(f"    {k}: {g[k]}")
        return "\n".join(lines + [")"])


def _host(value):
    if isinstance(value, Tensor):
        return value.numpy()
    if is_cupy_array(value):
        return value.get()
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _to_param(value, p: Tensor):
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, np.ndarray) and value.ndim > 0:
        if value.shape != p.shape:
            raise EveryOShapeError(
                f"optimizer state of shape {value.shape} does not fit a parameter of shape "
                f"{p.shape}"
            )
        return p.xp.asarray(value.astype(p.dtype, copy=False))
    return value.item() if isinstance(value, np.ndarray) else value
