"""A reusable finite-difference gradient checker (float64), for engine and nn tests.

>>> import numpy as np, everyo as eo
>>> from gradcheck import gradcheck  # tests/engine is on sys.path under pytest
>>> gradcheck(lambda a: (a * a).sum(), np.arange(3.0))
True
"""

from __future__ import annotations

import numpy as np

import everyo as eo


def _as_input(x, device, requires_grad):
    if isinstance(x, eo.Tensor):
        t = x.detach().to(device) if device is not None else x.detach()
        if t.dtype.kind == "f" and t.dtype != np.float64:
            t = t.astype("float64")
    else:
        arr = np.asarray(x)
        if arr.dtype.kind == "f":
            arr = arr.astype(np.float64)
        t = eo.tensor(arr, device=device)
    if requires_grad and t.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def gradcheck(fn, *inputs, device=None, wrt=None, eps=1e-6, atol=1e-6, rtol=1e-4, seed=0):
    """Compare ``fn``'s autograd gradients with central differences.

    Parameters
    ----------
    fn : callable
        Takes Tensors (one per input, in order) and returns a Tensor.
    *inputs : arrays or Tensors
        Floating ones are cast to float64 and (if in ``wrt``) checked; others pass as they are.
    device : str, optional
        Device to put the inputs on (``"cpu"``/``"cuda"``).
    wrt : iterable of int, optional
        Positions of the inputs to check; default every floating input.
    eps, atol, rtol : float
        Step and tolerances.

    Returns True, or raises ``AssertionError`` naming the input and the worst element.
    """
    floats = [
        i
        for i, x in enumerate(inputs)
        if np.asarray(_host(getattr(x, "data", x))).dtype.kind == "f"
    ]
    check = list(floats if wrt is None else wrt)
    tensors = [_as_input(x, device, i in check) for i, x in enumerate(inputs)]
    out = fn(*tensors)
    rng = np.random.default_rng(seed)
    # a random projection checks the whole Jacobian at the cost of one backward
    proj = rng.standard_normal(out.shape)
    proj_t = eo.tensor(proj, dtype=out.dtype, device=out.device)
    out.backward(proj_t)

    def objective():
        with eo.no_grad():
            value = fn(*tensors)
        return float(np.sum(_host(value.data).astype(np.float64) * proj))

    for i in check:
        t = tensors[i]
        analytic = np.zeros(t.shape) if t.grad is None else _host(t.grad.data)
        numeric = np.zeros(t.shape)
        flat = t.data.reshape(-1)  # a view: perturbing it perturbs the input
        for k in range(flat.size):
            orig = float(flat[k])
            flat[k] = orig + eps
            up = objective()
            flat[k] = orig - eps
            down = objective()
            flat[k] = orig
            numeric.reshape(-1)[k] = (up - down) / (2 * eps)
        err = np.abs(analytic - numeric)
        bound = atol + rtol * np.abs(numeric)
        if not np.all(err <= bound):
            k = int(np.argmax(err - bound))
            raise AssertionError(
                f"gradient of input {i} (shape {t.shape}) differs at flat index {k}: "
                f"autograd {analytic.reshape(-1)[k]!r} vs finite difference "
                f"{numeric.reshape(-1)[k]!r} (max abs error {err.max():.3g})"
            )
    return True
