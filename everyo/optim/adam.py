"""Adam (L2 weight decay folded into the gradient) and AdamW (decoupled weight decay)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from everyo.optim.optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's update rule and bias correction.

    ``m = b1 m + (1-b1) g``, ``v = b2 v + (1-b2) g²``,
    ``p -= lr / (1-b1^t) * m / (sqrt(v) / sqrt(1-b2^t) + eps)``; ``weight_decay`` adds
    ``weight_decay * p`` to ``g`` first. ``amsgrad`` divides by the running maximum of ``v``
    (state ``max_exp_avg_sq``) instead.
    """

    _decoupled = False

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
    ) -> None:
        if lr < 0 or eps < 0 or weight_decay < 0:
            raise ValueError(f"{type(self).__name__} needs lr, eps, weight_decay >= 0")
        if not (0 <= betas[0] < 1 and 0 <= betas[1] < 1):
            raise ValueError(f"betas must lie in [0, 1), got {betas}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay)
        if amsgrad:  # only then, so that saved states of plain Adam keep their keys
            defaults["amsgrad"] = True
        super().__init__(params, defaults)

    def _step(self) -> None:
        for group in self.param_groups:
            buckets: dict = {}
            for p in group["params"]:
                if p.grad is not None:
                    buckets.setdefault((p._device, p.data.dtype), []).append(p)
            for plist in buckets.values():
                self._update(plist, group)

    def load_state_dict(self, state_dict: dict) -> None:
        super().load_state_dict(state_dict)
        self._flat = {}

    def __getstate__(self) -> dict:
        out = super().__getstate__()
        out.pop("_flat", None)  # keyed by the parameters' ids; rebuilt from the state on use
        return out

    def _moments(self, plist: list):
        """One flat ``exp_avg`` and ``exp_avg_sq`` buffer for ``plist``; each parameter's state
        holds views into them, so the update runs as a dozen whole-buffer operations instead of
        a dozen per parameter (what ``foreach`` does in PyTorch)."""
        flat = self.__dict__.setdefault("_flat", {})
        key = tuple(id(p) for p in plist)
        states = [self._state_for(p) for p in plist]
        cached = flat.get(key)
        if cached is not None:
            m, v, views_m, views_v = cached
            if all(
                st.get("exp_avg") is vm and st.get("exp_avg_sq") is vv
                for st, vm, vv in zip(states, views_m, views_v)
            ):
                return m, v, states
        xp = plist[0].xp
        total = sum(p.data.size for p in plist)
        m = xp.zeros(total, dtype=plist[0].data.dtype)
        v = xp.zeros(total, dtype=plist[0].data.dtype)
        views_m, views_v, offset = [], [], 0
        for p, st in zip(plist, states):
            n, shape = p.data.size, p.data.shape
            vm, vv = m[offset : offset + n].reshape(shape), v[offset : offset + n].reshape(shape)
            if "exp_avg" in st:  # state from earlier steps or load_state_dict: keep its values
                vm[...] = st["exp_avg"]
                vv[...] = st["exp_avg_sq"]
            else:
                st["step"] = 0
            st["exp_avg"], st["exp_avg_sq"] = vm, vv
            views_m.append(vm)
            views_v.append(vv)
            offset += n
        flat[key] = (m, v, views_m, views_v)
        return m, v, states

    def _update(self, plist: list, group: dict) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if group.get("amsgrad"):
            for p in plist:
                _amsgrad_update(p, self._state_for(p), lr, b1, b2, eps, wd, self._decoupled)
            return
        m, v, states = self._moments(plist)
        t = states[0]["step"] + 1
        # Per-parameter updates when the parameters stepped apart, or when they are large:
        # then each op is bandwidth-bound and gathering the gradients would add a pass.
        if m.size > _FUSE_MAX_MEAN * len(plist) or any(st["step"] != t - 1 for st in states):
            for p, st in zip(plist, states):
                _adam_update(p, st, lr, b1, b2, eps, wd, self._decoupled)
            return
        for st in states:
            st["step"] = t
        xp = plist[0].xp
        grads = [p.grad.data.reshape(-1) for p in plist]
        g = grads[0] if len(grads) == 1 else xp.concatenate(grads)
        if wd:
            if self._decoupled:
                for p in plist:
                    p.data *= 1 - lr * wd
            else:
                data = [p.data.reshape(-1) for p in plist]
                g = g + wd * (data[0] if len(data) == 1 else xp.concatenate(data))
        upd = _moment_update(xp, m, v, g, lr, b1, b2, eps, t)
        offset = 0
        for p in plist:
            n = p.data.size
            p.data -= upd[offset : offset + n].reshape(p.data.shape)
            offset += n


_FUSE_MAX_MEAN = 65536  # fuse when the parameters hold at most this many elements on average


def _moment_update(xp, m, v, g, lr, b1, b2, eps, t):
    """Update the moments in place and return the step to subtract from the parameters."""
    m *= b1
    m += (1 - b1) * g
    v *= b2
    v += (1 - b2) * (g * g)
    denom = xp.sqrt(v)
    denom *= 1 / math.sqrt(1 - b2**t)
    denom += eps
    upd = m / denom
    upd *= lr / (1 - b1**t)
    return upd


def _apply_weight_decay(g, data, lr, wd, decoupled):
    """AdamW's decoupled decay shrinks ``data`` in place; Adam's adds ``wd * data`` to ``g``."""
    if wd:
        if decoupled:
            data *= 1 - lr * wd
        else:
            g = g + wd * data
    return g


def _adam_update(p, st, lr, b1, b2, eps, wd, decoupled) -> None:
    """One parameter's Adam step (large parameters, or parameters that stepped apart)."""
    g, data = p.grad.data, p.data
    st["step"] = t = st["step"] + 1
    g = _apply_weight_decay(g, data, lr, wd, decoupled)
    data -= _moment_update(p.xp, st["exp_avg"], st["exp_avg_sq"], g, lr, b1, b2, eps, t)


def _amsgrad_update(p, st, lr, b1, b2, eps, wd, decoupled) -> None:
    """One parameter's AMSGrad step: the denominator uses the running maximum of ``v``."""
    xp, g, data = p.xp, p.grad.data, p.data
    if "exp_avg" not in st:
        st["step"] = 0
        st["exp_avg"], st["exp_avg_sq"] = xp.zeros_like(data), xp.zeros_like(data)
    if "max_exp_avg_sq" not in st:
        st["max_exp_avg_sq"] = xp.zeros_like(data)
    st["step"] = t = st["step"] + 1
    g = _apply_weight_decay(g, data, lr, wd, decoupled)
    m, v, vmax = st["exp_avg"], st["exp_avg_sq"], st["max_exp_avg_sq"]
    m *= b1
    m += (1 - b1) * g
    v *= b2
    v += (1 - b2) * (g * g)
    xp.maximum(vmax, v, out=vmax)
    denom = xp.sqrt(vmax) / math.sqrt(1 - b2**t) + eps
    data -= (lr / (1 - b1**t)) * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): ``p *= 1 - lr * weight_decay``
    before the Adam update; default ``weight_decay=0.01`` as in PyTorch."""

    _decoupled = True

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        amsgrad: bool = False,
    ) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad)  # fmt: skip
