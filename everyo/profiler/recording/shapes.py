"""Shape text of module and op events: ``"[(32, 4), mask=(32, 1)] -> (32, 16)"``.

An array whose dtype is not float32 (the default of torch and everyo) has its dtype after its
shape: ``"[(32, 4) float16] -> (32, 16) float16"``, ``"[(32,) int64]"``.

Reading a shape never raises: an argument whose ``.shape`` raises an ``Exception`` counts as one
without a shape (the profiler never turns a call that succeeded into an error). An exception
the program's signal handler raised meanwhile is the program's, and goes on
(:mod:`everyo.profiler.recording.own_errors`).
"""

from __future__ import annotations

from everyo.profiler.recording.own_errors import raised_by_signal_handler


class _Seq:
    """Marks a list or tuple in a shape key (a shape may itself be a tuple)."""


def _read(x, name: str):
    """``x.shape`` or ``x.dtype``, ``None`` when it has none or its property fails."""
    try:
        return getattr(x, name, None)
    except Exception as exc:  # noqa: BLE001 - any fault of a user's property: none
        if raised_by_signal_handler(exc):
            raise
        return None


def _shape(x):
    return _read(x, "shape")


def _dtype(x):
    return _read(x, "dtype")


def dtype_suffix(dtype) -> str:
    """``" float16"`` for a dtype other than float32 (``torch.float16`` and NumPy's alike), ``""``
    for float32, none, or a dtype without a plain name (a structured NumPy dtype)."""
    if dtype is None:
        return ""
    try:
        name = str(dtype).rpartition(".")[2]  # "torch.bfloat16" -> "bfloat16"
    except Exception as exc:  # noqa: BLE001 - a user's dtype object failing: none shown
        if raised_by_signal_handler(exc):
            raise
        return ""
    if name == "float32" or not name.isidentifier() or len(name) > 24:
        return ""
    return f" {name}"


def _shape_text(x) -> str | None:
    shape = _shape(x)
    if shape is None:
        if isinstance(x, (tuple, list)):
            inner = [s for s in map(_shape_text, x) if s is not None]
            return f"({', '.join(inner)})" if inner else None
        return None
    try:
        text = str(tuple(shape))
    except Exception as exc:  # noqa: BLE001 - a shape that is not a sequence
        if raised_by_signal_handler(exc):
            raise
        return None
    return text + dtype_suffix(_dtype(x))


def shape_key(x, tensor=None):
    """A hashable key with the same text for equal keys: ``x``'s shape and dtype, or for a list
    or tuple without a shape, its items' keys (``tensor``: a class whose ``.data`` is read
    directly)."""
    if type(x) is tensor:
        data = x.data
        return data.shape, data.dtype
    shape = _shape(x)
    if shape is None:
        if isinstance(x, (tuple, list)):
            return (_Seq, *[shape_key(i, tensor) for i in x])
        return None
    return shape, _dtype(x)


def format_shapes(args, kwargs, out) -> str:
    """``"[(32, 4)] -> (32, 16)"``: tensor-like inputs (and keyword inputs) and the output."""
    ins = [s for s in map(_shape_text, args) if s is not None]
    ins += [f"{k}={s}" for k, s in ((k, _shape_text(v)) for k, v in kwargs.items()) if s]
    res = _shape_text(out)
    return f"[{', '.join(ins)}]" + (f" -> {res}" if res is not None else "")


class ShapeIds:
    """The store's shape ids of calls, cached by a key that tells apart every call whose shape
    text differs (lists and tuples of tensors included)."""

    def __init__(self, store, tensor=None):
        self.store = store
        self.tensor = tensor  # a class whose `.data.shape` is read directly (a Python property)
        self._ids: dict = {}

    def shape_id(self, args, kwargs, out) -> int:
        """The interned shape text of one call."""
        T = self.tensor
        try:
            sk = (
                tuple(
                    [
                        (a.data.shape, a.data.dtype) if type(a) is T else shape_key(a, T)
                        for a in args
                    ]
                ),
                tuple([(k, shape_key(v, T)) for k, v in kwargs.items()]) if kwargs else None,
                shape_key(out, T),
            )
            sid = self._ids.get(sk)
        except Exception as exc:  # noqa: BLE001 - an unhashable or failing shape: not cached
            if raised_by_signal_handler(exc):
                raise
            sk = sid = None
        if sid is None:
            sid = self.store.intern_shape(format_shapes(args, kwargs, out))
            if sk is not None:
                self._ids[sk] = sid
        return sid
