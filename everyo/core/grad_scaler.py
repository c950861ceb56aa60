"""``GradScaler``: dynamic loss scaling for float16 training, with PyTorch's semantics.

>>> import everyo as eo
>>> scaler = eo.GradScaler(init_scale=8.0)
>>> scaler.get_scale()
8.0

The loss is multiplied by the scale before ``backward()`` so that small float16 gradients do not
flush to zero; ``step()`` divides the gradients back (``unscale_``) and skips the optimizer step
when any gradient is inf or NaN; ``update()`` halves the scale after a skipped step and doubles it
after ``growth_interval`` clean ones.
"""

from __future__ import annotations

from everyo.core.backend import namespace_of
from everyo.errors import EveryOConfigError

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Scale losses, unscale gradients, skip steps whose gradients are not finite.

    Parameters
    ----------
    init_scale : float
        The starting scale.
    growth_factor, backoff_factor : float
        Multipliers applied by :meth:`update` after ``growth_interval`` clean steps, and after a
        step with inf/NaN gradients.
    growth_interval : int
        Clean steps between two growths.
    enabled : bool
        ``False`` makes every method a pass-through (one code path for both precisions).
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:  # fmt: skip
        if growth_factor <= 1.0 or not 0.0 < backoff_factor < 1.0 or growth_interval < 1:
            raise EveryOConfigError(
                "GradScaler needs growth_factor > 1, 0 < backoff_factor < 1 and "
                f"growth_interval >= 1 (got {growth_factor}, {backoff_factor}, {growth_interval})"
            )
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._enabled = bool(enabled)
        self._per_optimizer: dict[int, dict] = {}

    # ---- the training-loop calls ------------------------------------------------------------
    def scale(self, outputs):
        """``outputs * scale`` (a Tensor, or a list/tuple of them); float16 losses are scaled in
        float32 so that the product does not overflow."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if outputs.dtype.kind == "f" and outputs.dtype.itemsize < 4:
            outputs = outputs.astype("float32")
        return outputs * self._scale

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, and note whether any is
        inf/NaN. Call it before gradient clipping; ``step()`` calls it if you did not."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() was already called on this optimizer since update()")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step(); call update() first")
        inv = 1.0 / self._scale
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                g *= inv
                xp = namespace_of(g)
                found = found | ~xp.isfinite(g).all()  # stays on the device until the end
        state["found_inf"] = bool(found)
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (if not done yet) and run ``optimizer.step()``, unless a gradient is inf/NaN:
        then the step is skipped and None returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() was already called on this optimizer since update()")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        state["stage"] = _STEPPED
        if state["found_inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Adjust the scale for the next iteration (or set it to ``new_scale``)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(s["found_inf"] for s in self._per_optimizer.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._per_optimizer:
            self._growth_tracker += 1
            if self._growth_tracker >= self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer.clear()

    # ---- inspection and state ----------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def is_enabled(self) -> bool:
        return self._enabled

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def state_dict(self) -> dict:
        """Scale, factors, interval and growth tracker (empty when disabled, as in PyTorch)."""
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state: dict) -> None:
        if not self._enabled:
            return
        if not state:
            raise EveryOConfigError("the GradScaler state is empty (saved from a disabled one?)")
        self._scale = float(state["scale"])
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])

    def _state(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def __repr__(self) -> str:
        return f"GradScaler(scale={self.get_scale()}, enabled={self._enabled})"
