"""Profiling PyTorch: the adapter that records torch's work as everyo events (docs/pytorch.md).

Every profile (``profile()``, ``Profiler``, ``%%everyo_profile``, ``%everyo_dashboard``,
``python -m everyo profile``, ``everyo.distributed.profile_tasks``) installs it as it starts,
when ``torch`` is already imported in the process, and removes it as it stops, whatever way it
stops; ``Profiler(torch=False)`` (``--no-torch``) leaves torch alone. Nothing of it stays in
torch's path once the profile has stopped, and ``import everyo`` never imports torch: only
:class:`everyo.profiler.Profiler` imports this package, and only when torch is imported.

While installed it records, into the same store and with the same names and kinds as everyo's
own engine:

- each ``nn.Module`` call (``modules``): class name, path among the outermost module's
  ``named_modules()``, shapes; ``torch.compile``d and TorchScript modules as one event each
  (``compiled Net``, ``scripted Net``);
- each backward pass and, inside it, one group per parameterised module (``backward``);
- optimizer steps (they end training steps), ``zero_grad``, LR scheduler steps, DataLoader
  batches and the user's ``record_function`` blocks (``regions``);
- with ``record_ops``, linear, convolution, matmul and attention calls with their FLOPs
  (``ops``).

Event times are host times: on CUDA a module's event holds the launch of its kernels unless
``torch_sync=True`` synchronises at module boundaries.

>>> import torch
>>> import everyo.profiler as ep
>>> model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
>>> with ep.profile(label="torch doc") as p:
...     model(torch.randn(2, 4)).sum().backward()
>>> sorted({(e.kind, e.name) for e in p.events})[:3]
[('backward', 'Linear.backward'), ('backward', 'backward'), ('module', 'Linear')]
"""

from __future__ import annotations

import torch

from everyo.profiler.torch import backward as _backward
from everyo.profiler.torch import modules, ops
from everyo.profiler.torch import regions as _regions
from everyo.profiler.torch.patches import Patches

__all__ = ["TorchAdapter", "install", "remove_all"]

HOST_TIMES_NOTE = (
    "PyTorch events are host times: on CUDA a module's event holds the launch of its kernels, "
    "not their run (torch_sync=True synchronises at module boundaries)"
)


def _synchronize() -> None:
    if torch.cuda.is_initialized():  # (never the first CUDA call: that would start a context)
        torch.cuda.synchronize()


class TorchAdapter:
    """What one profile installed in torch; :meth:`remove` puts all of it back.

    Parameters
    ----------
    recorder : Recorder
        The profile's recorder (``hooks.active`` while it runs).
    sync : bool
        Synchronise CUDA before and after each module call (``torch_sync``), when CUDA is
        initialised.
    backward, regions : bool
        Also record backward passes (per module) and regions (optimizer, data,
        ``record_function``); a profile records all of them (``benchmarks/torch_cost.py``
        measures module calls alone).
    """

    def __init__(
        self, recorder, *, sync: bool = False, backward: bool = True, regions: bool = True
    ):
        self.patches = Patches()
        self.backward = _backward.BackwardPasses()
        _installed.append(self)  # first: remove_all() finds it whatever interrupts what follows
        self.sync = bool(sync)
        synchronize = _synchronize if sync and torch.cuda.is_available() else None
        try:
            modules.install(self.patches, synchronize)
            if backward:
                self.backward.install(self.patches, recorder)
            if regions:
                _regions.install(self.patches)
            if recorder.record_ops:
                ops.install(self.patches)
        except BaseException:
            self.remove()
            raise

    @property
    def installed(self) -> bool:
        return len(self.patches) > 0

    def remove(self) -> None:
        """Put back every patched attribute and remove every hook (idempotent)."""
        patched = vars(torch.nn.Module)["__call__"]
        try:
            self.backward.remove()
        finally:
            self.patches.restore()
        if patched is not vars(torch.nn.Module)["__call__"]:
            modules.forget(patched)

    def notes(self) -> dict:
        """What a run recorded with it says about itself (kept in the run's options)."""
        return {
            "framework": "torch",
            "torch_version": torch.__version__,
            "torch_sync": self.sync,
            "cuda": torch.cuda.is_initialized(),
            "times": HOST_TIMES_NOTE if not self.sync else "synchronised at module boundaries",
        }


_installed: list[TorchAdapter] = []  # adapters not yet removed, oldest first


def remove_all() -> None:
    """Remove every adapter still installed, newest first: the running profile's at its stop,
    and any an interrupted profile left (only one profile runs at a time). Safe to call again
    after an interrupt stopped it."""
    while _installed:
        _installed[-1].remove()
        _installed.pop()


def install(recorder, *, sync: bool = False) -> TorchAdapter:
    """Install the adapter for ``recorder``'s profile (first removing any an interrupted
    profile left); :func:`remove_all` when it stops."""
    remove_all()
    return TorchAdapter(recorder, sync=sync)
