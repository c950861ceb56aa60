"""``Tensor``: one array of its device's namespace (NumPy or CuPy), plus autograd state.

Operators and most methods *are* the op functions of :mod:`everyo.core.ops` (``t + u`` runs
``everyo.add(t, u)``, no wrapper in between), so every op goes through the single dispatch point.
They are declared, with their op, in the class body below and bound by
:data:`everyo.core.ops.TENSOR_METHODS` once the ops are imported (the ops import ``Tensor``).
"""

from __future__ import annotations

from copyreg import _slotnames  # the slots pickle's own default reads (cached per class)
from typing import TYPE_CHECKING

import numpy as np

from everyo.core import backend
from everyo.core import dtype as _dt
from everyo.core.device import CPU, Device, _interned, device_of_array
from everyo.core.device import device as _resolve
from everyo.errors import EveryOAutogradError, EveryODTypeError, EveryOShapeError
from everyo.profiler.recording import hooks as _hooks

_run_backward = None  # everyo.core.autograd.run_backward, set by that module (it imports this one)
_is_grad_enabled = None  # everyo.core.autograd.is_grad_enabled, bound the same way


def _read_only_one(dt) -> np.ndarray:
    one = np.ones((), dt)
    one.flags.writeable = False
    return one


# the seed gradient of a 0-d loss, shared: backward functions only read their gradient, and
# run_backward copies an array it did not make before it becomes a `.grad`
_ONE = {np.dtype(t): _read_only_one(t) for t in (np.float16, np.float32, np.float64)}

__all__ = ["Tensor", "tensor", "as_tensor"]

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    _Unary = Callable[["Tensor"], "Tensor"]
    _Binary = Callable[["Tensor", Any], "Tensor"]
    _Reduce = Callable[..., "Tensor"]
    _Method = Callable[..., "Tensor"]


def _host_array(data, dtype) -> np.ndarray:
    """Python data or a NumPy array as a NumPy array of a supported dtype."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.asarray(data)
        target = _dt.to_dtype(dtype) if dtype is not None else _dt.normalize_array_dtype(arr.dtype)
        return arr.astype(target, copy=False)
    try:
        arr = np.asarray(data)
    except ValueError as exc:
        raise EveryODTypeError(
            f"cannot make a tensor from ragged or irregular data ({exc}); every row must have "
            f"the same length"
        ) from exc
    if arr.dtype == object:
        raise EveryODTypeError(
            "cannot make a tensor from this data: it is ragged or holds non-numbers; every "
            "row must have the same length and hold numbers"
        )
    if dtype is not None:
        return arr.astype(_dt.to_dtype(dtype), copy=False)
    if arr.dtype.kind == "f":  # Python floats become float32, as in PyTorch
        return arr.astype(_dt.float32)
    return arr.astype(_dt.normalize_array_dtype(arr.dtype), copy=False)


class Tensor:
    """An n-dimensional array on a device, with optional gradient tracking.

    >>> import everyo as eo
    >>> t = eo.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> (t * t).sum().backward()
    >>> t.grad.tolist()
    [[2.0, 4.0], [6.0, 8.0]]
    """

    __slots__ = ("data", "requires_grad", "grad", "_node", "_device", "_retain", "__weakref__")
    __array_ufunc__ = None  # make `ndarray + Tensor` use Tensor.__radd__ instead of NumPy's loop

    def __init__(self, data, *, dtype=None, device=None, requires_grad: bool = False) -> None:
        t = tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        self.data, self._device = t.data, t._device
        self.requires_grad, self.grad, self._node, self._retain = requires_grad, None, None, False

    def __getstate__(self) -> tuple[dict | None, dict]:
        # what pickle protocols 2+ build by themselves for a class with __slots__, a subclass's
        # __dict__ and slots included; 0 and 1 (copyreg) refuse such a class unless it says so
        slots = {n: getattr(self, n) for n in _slotnames(type(self)) if hasattr(self, n)}
        # a tensor made by an op is saved as a leaf (its graph holds the ops' closures, which
        # cannot be pickled, and the tensors it came from), as torch does: requires_grad stays
        slots["_node"], slots["_retain"] = None, False
        return getattr(self, "__dict__", None) or None, slots

    def __setstate__(self, state) -> None:
        # pickle's own default, but the device is the shared instance: a tensor pickled before
        # Device.__reduce__ existed carries a copy, and the ops' fast paths compare with `is`
        attrs, slots = state if isinstance(state, tuple) else (state, None)
        if attrs:
            self.__dict__.update(attrs)
        for name, value in (slots or {}).items():
            if name == "_device" and type(value) is Device:
                value = _interned(value.type, value.index)
            setattr(self, name, value)

    @classmethod
    def _make(cls, data, device: Device) -> Tensor:
        # The hot path for op outputs: no validation, no conversion.
        t = object.__new__(cls)
        t.data = data
        t._device = device
        t.requires_grad = False
        t.grad = None
        t._node = None
        t._retain = False
        return t

    # ---- operators and op methods ---------------------------------------------------------
    # Each is the op function named in the comment (everyo.core.ops), bound onto the class by
    # everyo.core.ops.TENSOR_METHODS; a test checks that this list and the binding agree.
    __add__: _Binary  # add (a fast path for plain tensors, see ops._dispatch)
    __radd__: _Binary  # elementwise.radd: other + self
    __sub__: _Binary  # subtract
    __rsub__: _Binary  # elementwise.rsubtract
    __mul__: _Binary  # multiply
    __rmul__: _Binary  # elementwise.rmultiply
    __truediv__: _Binary  # divide
    __rtruediv__: _Binary  # elementwise.rdivide
    __pow__: _Binary  # power
    __rpow__: _Binary  # elementwise.rpower
    __matmul__: _Binary  # matmul
    __rmatmul__: _Binary  # linalg.rmatmul
    __neg__: _Unary  # negative
    __abs__: _Unary  # abs
    __eq__: _Binary  # equal (elementwise; a boolean tensor)
    __ne__: _Binary  # not_equal
    __lt__: _Binary  # less
    __le__: _Binary  # less_equal
    __gt__: _Binary  # greater
    __ge__: _Binary  # greater_equal
    __getitem__: _Method  # getitem (basic and advanced indexing, differentiable)
    add: _Binary  # add
    sub: _Binary  # subtract
    mul: _Binary  # multiply
    div: _Binary  # divide
    pow: _Binary  # power
    maximum: _Binary  # maximum
    minimum: _Binary  # minimum
    matmul: _Binary  # matmul
    dot: _Binary  # dot
    exp: _Unary  # exp
    log: _Unary  # log
    sqrt: _Unary  # sqrt
    abs: _Unary  # abs
    relu: _Unary  # relu
    gelu: _Method  # gelu(approximate="none")
    sigmoid: _Unary  # sigmoid
    tanh: _Unary  # tanh
    softmax: _Method  # softmax(axis=-1)
    log_softmax: _Method  # log_softmax(axis=-1)
    clip: _Method  # clip(min=None, max=None)
    clamp: _Method  # clip
    sum: _Reduce  # sum(axis=None, keepdims=False, *, dim=None, keepdim=None)
    mean: _Reduce  # mean
    max: _Reduce  # max
    min: _Reduce  # min
    var: _Reduce  # var(..., ddof=0)
    std: _Reduce  # std(..., ddof=0)
    logsumexp: _Reduce  # logsumexp
    argmax: _Reduce  # argmax (int64)
    argmin: _Reduce  # argmin (int64)
    reshape: _Method  # reshape(*shape)
    view: _Method  # reshape
    transpose: _Method  # transpose(*dims)
    permute: _Method  # permute(*dims)
    flatten: _Method  # flatten(start_dim=0, end_dim=-1)
    squeeze: _Method  # squeeze(dim=None)
    unsqueeze: _Method  # unsqueeze(dim)
    broadcast_to: _Method  # broadcast_to(*shape)
    expand: _Method  # broadcast_to
    astype: _Method  # astype(dtype)
    to: _Method  # to(device=None, dtype=None)
    cpu: _Unary  # cpu
    cuda: _Method  # cuda(strict=False)
    clone: _Unary  # clone
    float: _Unary  # astype float32
    double: _Unary  # astype float64
    half: _Unary  # astype float16
    long: _Unary  # astype int64
    int: _Unary  # astype int32
    bool: _Unary  # astype bool

    # ---- properties -----------------------------------------------------------------------
    shape = property(lambda self: self.data.shape, doc="The shape, a tuple of ints.")
    ndim = property(lambda self: self.data.ndim, doc="Number of dimensions.")
    size = property(lambda self: int(self.data.size), doc="Number of elements.")
    dtype = property(lambda self: self.data.dtype, doc="The element dtype (a NumPy dtype).")
    device = property(lambda self: self._device, doc="The :class:`Device` holding the data.")
    is_leaf = property(lambda self: self._node is None, doc="True unless made by a tracked op.")
    nbytes = property(lambda self: int(self.data.nbytes), doc="Bytes held by the data.")

    @property
    def xp(self):
        """The array namespace of the data: ``numpy`` or ``cupy``."""
        return backend.namespace_of(self.data)

    @property
    def T(self) -> Tensor:
        """The tensor with its axes reversed."""
        return self.transpose()

    def numel(self) -> int:
        return int(self.data.size)

    def dim(self) -> int:
        return self.data.ndim

    # ---- conversion -----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host (NumPy) copy of the data."""
        if self._device.type == "cpu":
            return self.data.copy()
        return self.data.get()

    def __array__(self, dtype=None, copy=None):
        # lets NumPy functions read CPU tensors; a GPU tensor must be copied explicitly
        if self._device.type != "cpu":
            raise TypeError(
                f"a tensor on {self._device} cannot become a NumPy array implicitly; call "
                f".numpy() (a host copy) or .cpu() first"
            )
        arr = self.data if dtype is None else self.data.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.data.size != 1:
            raise ValueError(
                f"item() needs a tensor with one element, this one has shape {self.shape}"
            )
        return self.data.reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    def detach(self) -> Tensor:
        """The same data, cut from the graph."""
        return Tensor._make(self.data, self._device)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and not _dt.is_floating(self.data.dtype):
            raise EveryODTypeError(
                f"only floating-point tensors can require gradients, this one is {self.dtype}"
            )
        if not requires_grad and self._node is not None:
            raise EveryOAutogradError(
                "requires_grad can only be switched off on a leaf; use detach()"
            )
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> Tensor:
        """Keep ``.grad`` on this non-leaf tensor after ``backward()``."""
        if not self.requires_grad:
            raise EveryOAutogradError("retain_grad() on a tensor that does not require grad")
        self._retain = self._node is not None
        return self

    def backward(self, gradient=None, retain_graph: bool = False) -> None:
        """Compute gradients of this tensor with respect to the leaves that require them."""
        if not self.requires_grad:
            raise EveryOAutogradError(
                "backward() on a tensor that does not require grad: make a leaf with "
                "requires_grad=True (or check that it was not computed under no_grad())"
            )
        data = self.data
        if gradient is None:
            if data.size != 1:
                raise EveryOAutogradError(
                    f"backward() on a non-scalar output of shape {self.shape} needs an explicit "
                    f"gradient of that shape, e.g. out.backward(eo.ones_like(out))"
                )
            grad = _ONE.get(data.dtype) if type(data) is np.ndarray and data.ndim == 0 else None
            if grad is None:
                grad = self.xp.ones_like(data)
        else:
            grad = gradient.data if isinstance(gradient, Tensor) else self.xp.asarray(gradient)
            if grad.shape != self.shape:
                raise EveryOShapeError(
                    f"gradient has shape {grad.shape} but the output has shape {self.shape}"
                )
            grad = grad.astype(self.dtype, copy=False)
        prof = _hooks.active
        if prof is None:
            _run_backward(self, grad, retain_graph, None)
        else:
            prof.backward_call(_run_backward, self, grad, retain_graph, prof)

    def zero_grad(self) -> None:
        self.grad = None

    # ---- misc -----------------------------------------------------------------------------
    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(
                f"the truth value of a tensor with {self.data.size} elements is ambiguous; "
                f"use .any() or .all()"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.data.dtype.kind not in "iu" or self.data.size != 1:
            raise TypeError("only one-element integer tensors can be used as an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __setitem__(self, index, value) -> None:
        if self.requires_grad and _is_grad_enabled():
            raise EveryOAutogradError(
                "in-place assignment to a tensor that requires grad; do it under eo.no_grad()"
            )
        if isinstance(index, Tensor):
            index = index.data
        self.data[index] = value.data if isinstance(value, Tensor) else value

    def any(self) -> bool:
        return bool(self.data.any())

    def all(self) -> bool:
        return bool(self.data.all())

    def __repr__(self) -> str:
        body = np.array2string(
            self.numpy() if self.data.size <= 1000 else self.numpy().ravel()[:6],
            separator=", ",
            prefix="tensor(",
            threshold=100,
        )
        extras = [f"dtype={self.dtype}"]
        if self._device.type != "cpu":
            extras.append(f"device='{self._device}'")
        if self.requires_grad:
            extras.append(f"grad_fn=<{self._node.name}>" if self._node else "requires_grad=True")
        if self.data.size > 1000:
            extras.insert(0, f"shape={self.shape}")
        return f"tensor({body}, {', '.join(extras)})"


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Make a new tensor (always a copy) from Python data, a NumPy/CuPy array or a Tensor.

    Python floats become float32, Python ints int64, NumPy arrays keep their dtype.
    """
    dev = None if device is None else _resolve(device)
    if isinstance(data, Tensor):
        arr, src = data.data, data._device
        if dtype is not None:
            arr = arr.astype(_dt.to_dtype(dtype))  # a fresh array: no second copy below
        out = _transfer(arr, src, dev or src, copy=dtype is None)
    elif backend.is_cupy_array(data):
        src = device_of_array(data)
        arr = data if dtype is None else data.astype(_dt.to_dtype(dtype))
        out = _transfer(arr, src, dev or src, copy=dtype is None)
    else:
        arr = _host_array(data, dtype)
        out = _transfer(arr, CPU, dev or CPU, copy=True)
    if requires_grad:
        out.requires_grad_(True)
    return out


def is_tensor(obj) -> bool:
    """True exactly when ``obj`` is an everyo :class:`Tensor` (a ``Parameter`` too); arrays and
    lists give False. Never raises."""
    return isinstance(obj, Tensor)


def as_tensor(data, *, dtype=None, device=None) -> Tensor:
    """Like :func:`tensor` but shares memory where possible (no copy when nothing changes)."""
    if isinstance(data, Tensor):
        if (dtype is None or _dt.to_dtype(dtype) == data.dtype) and (
            device is None or _resolve(device) == data.device
        ):
            return data
        return data.to(device=device, dtype=dtype)
    dev = None if device is None else _resolve(device)
    if backend.is_cupy_array(data):
        src = device_of_array(data)
        arr = data if dtype is None else data.astype(_dt.to_dtype(dtype), copy=False)
        return _transfer(arr, src, dev or src, copy=False)
    arr = _host_array(data, dtype)
    return _transfer(arr, CPU, dev or CPU, copy=False)


def _transfer(arr, src: Device, dst: Device, *, copy: bool) -> Tensor:
    if src == dst:
        return Tensor._make(arr.copy() if copy else arr, dst)
    if dst.type == "cpu":
        return Tensor._make(arr.get(), dst)
    cupy = backend.cupy_module()
    with cupy.cuda.Device(dst.index):
        return Tensor._make(cupy.asarray(arr), dst)


_hooks.set_tensor_type(Tensor)  # the profiler reads shapes from Tensor.data: told, not looked up
