"""Every op, grouped by family (creation, elementwise, reduce, movement, linalg, convert, and
neural ops in nn_ops), and the binding of Tensor operators and methods to them.

Every op goes through :func:`everyo.core.ops._dispatch.dispatch`.
"""

from __future__ import annotations

from everyo.core.ops import convert, creation, elementwise, linalg, movement, nn_ops, reduce
from everyo.core.ops.convert import *  # noqa: F403
from everyo.core.ops.creation import *  # noqa: F403
from everyo.core.ops.elementwise import *  # noqa: F403
from everyo.core.ops.linalg import *  # noqa: F403
from everyo.core.ops.movement import *  # noqa: F403
from everyo.core.ops.nn_ops import *  # noqa: F403
from everyo.core.ops.reduce import *  # noqa: F403

__all__ = (
    convert.__all__
    + creation.__all__
    + elementwise.__all__
    + linalg.__all__
    + movement.__all__
    + reduce.__all__
    + nn_ops.__all__
)


def _cast(dtype):
    def method(self):
        return convert.astype(self, dtype)

    method.__name__ = dtype
    method.__doc__ = f"The tensor as {dtype} (itself when it already is)."
    return method


def _tensor_methods() -> dict:
    e, r, m, n = elementwise, reduce, movement, nn_ops
    return {
        "__add__": e.add, "__radd__": e.radd, "__sub__": e.subtract, "__rsub__": e.rsubtract,
        "__mul__": e.multiply, "__rmul__": e.rmultiply, "__truediv__": e.divide,
        "__rtruediv__": e.rdivide, "__pow__": e.power, "__rpow__": e.rpower,
        "__neg__": e.negative, "__abs__": e.abs,
        "__matmul__": linalg.matmul, "__rmatmul__": linalg.rmatmul,
        "__eq__": e.equal, "__ne__": e.not_equal, "__lt__": e.less, "__le__": e.less_equal,
        "__gt__": e.greater, "__ge__": e.greater_equal, "__getitem__": m.getitem,
        "add": e.add, "sub": e.subtract, "mul": e.multiply, "div": e.divide, "pow": e.power,
        "exp": e.exp, "log": e.log, "sqrt": e.sqrt, "abs": e.abs, "clip": e.clip,
        "clamp": e.clip, "maximum": e.maximum, "minimum": e.minimum,
        "sum": r.sum, "mean": r.mean, "max": r.max, "min": r.min, "var": r.var, "std": r.std,
        "logsumexp": r.logsumexp, "argmax": r.argmax, "argmin": r.argmin,
        "reshape": m.reshape, "view": m.reshape, "transpose": m.transpose,
        "permute": m.permute, "flatten": m.flatten, "squeeze": m.squeeze,
        "unsqueeze": m.unsqueeze, "broadcast_to": m.broadcast_to, "expand": m.broadcast_to,
        "matmul": linalg.matmul, "dot": linalg.dot,
        "astype": convert.astype, "to": convert.to, "cpu": convert.cpu, "cuda": convert.cuda,
        "clone": convert.clone,
        "float": _cast("float32"), "double": _cast("float64"), "half": _cast("float16"),
        "long": _cast("int64"), "int": _cast("int32"), "bool": _cast("bool"),
        "relu": n.relu, "gelu": n.gelu, "sigmoid": n.sigmoid, "tanh": n.tanh,
        "softmax": n.softmax, "log_softmax": n.log_softmax,
    }  # fmt: skip


TENSOR_METHODS = _tensor_methods()
"""Tensor's operators and op methods: name -> the op function it is (``t + u`` is
``everyo.add(t, u)``, no wrapper in between). Declared in the class body of
:class:`everyo.core.tensor.Tensor`, bound here because the ops import ``Tensor``."""


def _bind_tensor_methods() -> None:
    from everyo.core.tensor import Tensor

    for name, fn in TENSOR_METHODS.items():
        setattr(Tensor, name, fn)


_bind_tensor_methods()
