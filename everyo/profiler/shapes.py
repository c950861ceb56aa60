"""Shape text of module and op events: ``"[(32, 4), mask=(32, 1)] -> (32, 16)"``."""

from __future__ import annotations


def _shape_text(x) -> str | None:
    shape = getattr(x, "shape", None)
    if shape is None:
        if isinstance(x, (tuple, list)):
            inner = [s for s in map(_shape_text, x) if s is not None]
            return f"({', '.join(inner)})" if inner else None
        return None
    return str(tuple(shape))


def format_shapes(args, kwargs, out) -> str:
    """``"[(32, 4)] -> (32, 16)"``: tensor-like inputs (and keyword inputs) and the output."""
    ins = [s for s in map(_shape_text, args) if s is not None]
    ins += [f"{k}={s}" for k, s in ((k, _shape_text(v)) for k, v in kwargs.items()) if s]
    res = _shape_text(out)
    return f"[{', '.join(ins)}]" + (f" -> {res}" if res is not None else "")
