"""Reverse-mode autodiff: each op records a :class:`Node` with a backward closure.

Every node carries a sequence number taken when its op ran, so a node is always numbered after
the nodes of its inputs. ``backward()`` runs the nodes reachable from the root in decreasing
number (a heap of the nodes whose gradient has started to arrive): when a node is popped, every
node that consumes its output has already run, so its gradient is complete. That is one pass, no
separate topological sort and no recursion (a 10,000-deep chain works). Leaf gradients are
accumulated into ``.grad`` at the end, and the graph is freed unless ``retain_graph=True``. Grad
mode is thread-local.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import threading

import numpy as np

from everyo.core import float_mode as _float_mode
from everyo.core import tensor as _tensor
from everyo.core.tensor import Tensor
from everyo.errors import EveryOAutogradError
from everyo.profiler.recording import hooks as _hooks

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


class _Mode(threading.local):
    # a class default, so that reading the mode on a thread that never set it is a plain
    # attribute read (getattr with a default pays for a caught AttributeError on every op)
    enabled = True


_mode = _Mode()
_new = object.__new__
_next_seq = itertools.count().__next__  # node numbers: atomic under the GIL, never repeated
_push, _pop = heapq.heappush, heapq.heappop
_ndarray = np.ndarray


def is_grad_enabled() -> bool:
    """Whether ops record a graph on this thread."""
    return _mode.enabled


def _set(enabled: bool) -> None:
    _mode.enabled = enabled


class _GradMode(contextlib.ContextDecorator):
    enabled = True

    def __new__(cls, *args):
        # `@eo.no_grad` without parentheses decorates directly, as in PyTorch
        if cls is not set_grad_enabled and len(args) == 1 and callable(args[0]):
            return cls()(args[0])
        return super().__new__(cls)

    def __init__(self, *args) -> None:
        if args and not (len(args) == 1 and callable(args[0])):
            raise TypeError(f"{type(self).__name__}() takes no arguments")

    def _recreate_cm(self):
        # a fresh manager per decorated call, so that threads and recursion do not share `_prev`
        fresh = object.__new__(type(self))
        fresh.enabled = self.enabled
        return fresh

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set(self.enabled)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False


class no_grad(_GradMode):
    """Context manager and decorator: no graph is recorded inside (inference, updates)."""

    enabled = False


class enable_grad(_GradMode):
    """Context manager and decorator: re-enable graph recording inside a ``no_grad`` block."""

    enabled = True


class set_grad_enabled(_GradMode):
    """Set grad mode now (``eo.set_grad_enabled(False)``), or for a ``with`` block / decorator."""

    def __init__(self, mode: bool) -> None:
        self.enabled = bool(mode)
        self._prev = is_grad_enabled()
        self._switched = True  # the mode changed now; a `with` block restores `_prev` at exit
        _set(self.enabled)

    def __enter__(self):
        if getattr(self, "_switched", False):
            self._switched = False
            return self
        return super().__enter__()

    def __call__(self, func):
        _set(self._prev)  # used as a decorator: undo the immediate switch, apply per call
        self._switched = False
        return super().__call__(func)


class Node:
    """One recorded op: ``backward_fn(grad) -> tuple of input grads`` (aligned with ``parents``).

    ``seq`` orders nodes by creation: larger than the ``seq`` of every node among its inputs."""

    __slots__ = ("backward_fn", "parents", "name", "scope", "seq")

    def __init__(self, backward_fn, parents, name, scope):
        self.backward_fn = backward_fn
        self.parents = parents
        self.name = name
        self.scope = scope
        self.seq = _next_seq()

    def __repr__(self) -> str:
        return f"<Node {self.name}>"


def make_result(data, parents, backward_fn, name: str, device):
    """Wrap ``data`` as an op output; record a graph node if any parent needs a gradient.

    ``parents`` is a tuple of Tensors; ``backward_fn(g)`` returns one gradient (array or None)
    per parent, already reduced to that parent's shape.
    """
    if isinstance(data, np.generic):  # NumPy reductions return scalars; keep 0-d arrays
        data = np.asarray(data)
    out = _new(Tensor)  # Tensor._make, inlined: this runs once per op
    out.data = data
    out._device = device
    out.grad = out._node = None
    out._retain = False
    if _mode.enabled:
        for p in parents:
            if p.requires_grad:
                prof = _hooks.active
                node = out._node = _new(Node)  # Node(...) without an __init__ call
                node.backward_fn = backward_fn
                node.parents = parents
                node.name = name
                node.scope = None if prof is None else prof.scope()
                node.seq = _next_seq()
                out.requires_grad = True
                return out
    out.requires_grad = False
    return out


def zero_grads(params, set_to_none: bool = True) -> None:
    """Clear the ``.grad`` of each tensor in ``params`` (to ``None``, or zeros in place).

    Shared by ``Module.zero_grad`` and ``Optimizer.zero_grad``.
    """
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad.data[...] = 0


def _accumulate(t, g, given: set) -> None:
    """Add ``g`` into ``t.grad``. A gradient becomes ``.grad`` only if it is a fresh array of its
    own: views (broadcasts, reshapes) and arrays already handed to another tensor are copied, so
    that in-place updates of one ``.grad`` (optimizers, GradScaler) never touch another."""
    if isinstance(g, np.generic):
        g = np.asarray(g)
    if g.dtype != t.data.dtype:
        g = g.astype(t.data.dtype)
    elif g.base is not None or id(g) in given or not getattr(g.flags, "writeable", True):
        g = g.copy()
    if t.grad is None:
        given.add(id(g))
        t.grad = Tensor._make(g, t._device)
    else:
        t.grad = Tensor._make(t.grad.data + g, t._device)


def run_backward(root, grad, retain_graph: bool, prof) -> None:
    """Propagate ``grad`` from ``root`` to every leaf that requires a gradient, with subnormal
    floats flushed to zero (:mod:`everyo.core.float_mode`)."""
    try:
        _float_mode.begin()
        _propagate(root, grad, retain_graph, prof)
    finally:
        _float_mode.end()


def _propagate(root, grad, retain_graph: bool, prof) -> None:
    given: set = {id(grad)}  # the root gradient may be the caller's array: never alias it
    node = root._node
    if node is None:  # a leaf: its own gradient
        _accumulate(root, grad, given)
        return None
    # a profiler that groups nodes itself (Recorder.backward_groups) gets each node through its
    # pass's enter(node), which opens a group only where the module changes; one without that
    # method gets every node through backward_node
    groups = None if prof is None else getattr(prof, "backward_groups", None)
    enter = None if groups is None else groups()
    grads = {root: grad}  # keyed by the tensor itself (Tensor hashes by identity)
    heap = [(-node.seq, root)]  # seqs are unique: tuples never compare the tensors
    leaves = []
    while heap:
        # popping the highest seq first: every consumer of `t` has run, its gradient is whole;
        # popping it from `grads` drops each intermediate as soon as its node has run, so the
        # allocator can reuse its memory for the gradients still to come
        t = _pop(heap)[1]
        g = grads.pop(t)
        node = t._node
        if t._retain:
            _accumulate(t, g, given)
        fn = node.backward_fn
        if fn is None:
            raise EveryOAutogradError(
                f"trying to backward through the graph a second time (at {node.name}); its "
                f"buffers were freed by the first backward: pass retain_graph=True to the first"
            )
        if prof is None:
            in_grads = fn(g)
        elif enter is not None:
            enter(node)
            in_grads = fn(g)
        else:
            in_grads = prof.backward_node(node.scope, node.name, functools.partial(fn, g))
        for p, pg in zip(node.parents, in_grads):
            if pg is None or not p.requires_grad:
                continue
            prev = grads.get(p)
            if prev is not None:
                grads[p] = prev + pg
                continue
            grads[p] = pg
            pnode = p._node
            if pnode is None:
                leaves.append(p)
            else:
                _push(heap, (-pnode.seq, p))
        if not retain_graph:  # free the saved arrays and the links to the inputs
            node.backward_fn = None
            node.parents = ()
    for p in leaves:  # every node has run: each leaf's gradient is whole
        g = grads.pop(p)
        if (  # the training-loop case: no .grad yet, a fresh array of the right dtype
            p.grad is None
            and type(g) is _ndarray
            and g.base is None
            and g.dtype == p.data.dtype
            and id(g) not in given
            and g.flags.writeable
        ):
            given.add(id(g))
            out = p.grad = _new(Tensor)
            out.data = g
            out._device = p._device
            out.requires_grad = False
            out.grad = out._node = None
            out._retain = False
        else:
            _accumulate(p, g, given)
    return None


_tensor._run_backward = run_backward  # Tensor.backward's engine, bound without an import per call
_tensor._is_grad_enabled = is_grad_enabled  # (Tensor.__setitem__ refuses to break a graph)
