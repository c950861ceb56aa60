"""``Parameter``: a Tensor that a Module registers as trainable when assigned as an attribute."""

from __future__ import annotations

from everyo.core.tensor import Tensor, as_tensor
from everyo.errors import EveryODTypeError

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf tensor with ``requires_grad=True`` that modules collect in ``parameters()``.

    It shares memory with the tensor or array it is made from, as ``torch.nn.Parameter`` does.

    >>> import everyo as eo
    >>> w = eo.nn.Parameter(eo.zeros(2, 3))
    >>> w.requires_grad, w.shape
    (True, (2, 3))
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        src = as_tensor([] if data is None else data)
        if requires_grad and src.dtype.kind != "f":
            raise EveryODTypeError(
                f"a Parameter that requires grad must be floating point, not {src.dtype}; "
                f"cast it first (e.g. .astype('float32')) or pass requires_grad=False"
            )
        self.data, self._device = src.data, src._device
        self.requires_grad, self.grad, self._node, self._retain = requires_grad, None, None, False

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()
