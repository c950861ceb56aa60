"""What sweeps need to know about PyTorch, without importing it.

torch is only ever looked up in ``sys.modules``: a workload that holds torch tensors or modules
has imported torch already; if it is not imported, nothing here can be a torch object, and every
function answers as if torch did not exist. ``import everyo`` never imports torch.

Peak memory of a torch point comes from torch's own allocator on CUDA
(``torch.cuda.max_memory_allocated``, reset per point) and from the process's resident-set
growth on the CPU: :mod:`tracemalloc` does not see torch's CPU allocator (see
:func:`everyo.bench.call_memory.resident_peak`).
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from everyo.bench.call_memory import resident_peak, trim_heap

__all__ = [
    "torch_module",
    "is_torch_module",
    "holds_torch",
    "torch_on_cuda",
    "TorchInferenceStep",
    "probe_torch_memory",
    "torch_synchronize",
    "free_torch_cache",
    "is_torch_out_of_memory",
]

_MAX_DEPTH = 3
_MAX_ITEMS = 64

# torch's CPU allocator reports a failed allocation as a RuntimeError with one of these texts
# (c10/core/impl/alloc_cpu.cpp: Linux and macOS, then Windows); older CUDA builds raised a
# RuntimeError before torch.cuda.OutOfMemoryError existed
_OOM_TEXTS = (
    "DefaultCPUAllocator: can't allocate memory",
    "DefaultCPUAllocator: not enough memory",
    "CUDA out of memory",
)


def torch_module():
    """The ``torch`` module when the process has imported it, else ``None``."""
    return sys.modules.get("torch")


def is_torch_module(obj: Any) -> bool:
    """Whether ``obj`` is a ``torch.nn.Module``."""
    torch = torch_module()
    return torch is not None and isinstance(obj, torch.nn.Module)


def holds_torch(obj: Any, _depth: int = 0) -> bool:
    """Whether ``obj`` is (or a tuple, list or dict it holds has) a torch tensor or module."""
    torch = torch_module()
    if torch is None:
        return False
    if isinstance(obj, (torch.Tensor, torch.nn.Module)):
        return True
    if _depth >= _MAX_DEPTH:
        return False
    if isinstance(obj, dict):
        return any(holds_torch(v, _depth + 1) for v in list(obj.values())[:_MAX_ITEMS])
    if isinstance(obj, (tuple, list)):
        return any(holds_torch(v, _depth + 1) for v in obj[:_MAX_ITEMS])
    model = getattr(obj, "model", None)  # a TorchInferenceStep
    return model is not None and _depth == 0 and is_torch_module(model)


def torch_on_cuda(obj: Any, _depth: int = 0) -> bool:
    """Whether a torch tensor in ``obj`` (a few levels of containers deep), or a parameter of a
    torch module there, lives on a CUDA device."""
    torch = torch_module()
    if torch is None:
        return False
    if isinstance(obj, torch.Tensor):
        return obj.device.type == "cuda"
    if isinstance(obj, torch.nn.Module):
        first = next(iter(obj.parameters()), None)
        return first is not None and first.device.type == "cuda"
    if _depth >= _MAX_DEPTH:
        return False
    if isinstance(obj, dict):
        return any(torch_on_cuda(v, _depth + 1) for v in list(obj.values())[:_MAX_ITEMS])
    if isinstance(obj, (tuple, list)):
        return any(torch_on_cuda(v, _depth + 1) for v in obj[:_MAX_ITEMS])
    model = getattr(obj, "model", None)
    return model is not None and _depth == 0 and torch_on_cuda(model, _MAX_DEPTH - 1)


class TorchInferenceStep:
    """``model(batch)`` under ``torch.no_grad()``; a class so process executors can pickle it.

    A dict batch is passed as keyword arguments (``model(**batch)``), as Hugging Face models
    take their inputs; a tuple or list as one argument, as everyo's inference step does.
    """

    def __init__(self, model):
        self.model = model

    def __call__(self, batch):
        import torch  # (already imported: the model is a torch module)

        with torch.no_grad():
            if isinstance(batch, dict):
                return self.model(**batch)
            return self.model(batch)


def probe_torch_memory(call, *, cuda: bool) -> tuple[int, int | None, str]:
    """Peak memory of one untimed ``call()`` on torch, after one untimed call that warms it up.

    Returns ``(host bytes, GPU bytes or None, source)``: the process's resident-set growth at
    the call's peak (torch's CPU allocator is invisible to :mod:`tracemalloc`), and on CUDA the
    growth of ``torch.cuda.max_memory_allocated`` over the call, its peak statistics reset
    first. ``source`` is ``"torch.cuda"`` or ``"rss"`` (the keys of
    :data:`everyo.bench.sweep_point.MEMORY_SOURCES`). The warm-up call keeps torch's one-time
    set-up (thread pools, oneDNN primitives, cuBLAS handles) out of the figure; the heap is
    trimmed after it, so memory it freed is not already resident when the measured call asks
    for it.
    """
    torch = torch_module()
    result = call()
    del result
    gc.collect()
    trim_heap()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()

    def synced():
        out = call()
        if cuda:
            torch.cuda.synchronize()
        return out

    host = resident_peak(synced)
    if not cuda:
        return host, None, "rss"
    return host, max(int(torch.cuda.max_memory_allocated()) - int(before), 0), "torch.cuda"


def torch_synchronize() -> None:
    """Wait for torch's current CUDA device, when torch has initialised CUDA (else nothing)."""
    torch = torch_module()
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def free_torch_cache() -> None:
    """Give torch's cached CUDA blocks back to the driver (when CUDA is initialised), so the
    next point starts clean; the C heap is trimmed either way by the caller."""
    torch = torch_module()
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def is_torch_out_of_memory(exc: BaseException) -> bool:
    """torch's CPU allocator failing (a ``RuntimeError`` naming ``DefaultCPUAllocator``), or an
    old CUDA build's ``RuntimeError: CUDA out of memory``. ``torch.cuda.OutOfMemoryError`` is
    matched by name already, as CuPy's is."""
    return isinstance(exc, RuntimeError) and any(text in str(exc) for text in _OOM_TEXTS)
