"""Backward events: each backward pass, and within it one event per module owning parameters.

``torch.autograd.backward`` (which ``Tensor.backward`` calls) and ``torch.autograd.grad`` run
as the recorder's ``backward_call`` while a profile runs: one ``backward`` event per pass, as the
engine's (a ``grad`` pass has no module groups: it accumulates into no ``.grad``). Inside
it, a module's group (``Linear.backward``, its path) runs from the previous module's boundary to
the moment its first parameter's gradient is accumulated, which a hook registered once per
parameterised module (``register_post_accumulate_grad_hook``, when the recorder first gives the
module a path) marks. One hook per module per step is the cheapest boundary measured: a hook on
each autograd node a module makes costs a registration and a call per module call
(PYTORCH_NOTES). The backward of parameter-free modules between two such modules (activations,
the loss) is counted in the next parameterised module's group.

Hooks run on whichever thread autograd runs the node (on CUDA, its device threads): the pass
they belong to is the one the adapter started, not a thread's state, so they are attributed to
modules on any thread.
"""

from __future__ import annotations

import torch
from torch import nn

from everyo import _compiled
from everyo.profiler.recording import hooks
from everyo.profiler.recording.packing import KEY_BITS

_is_compiling = torch.compiler.is_compiling
# the pass and the hook in C, where the recorder is: a hook runs between torch's kernels, with
# Python's caches cold, where the Python pass and hook cost about 5 us more a module
# (benchmarks/torch_parts.py)
_c = _compiled.load("everyo.profiler.recording._crecorder")


class _Pass:
    """One running backward pass: where its next group starts and which module closed the
    last one (``_crecorder.TorchPass`` is its compiled twin)."""

    __slots__ = ("p", "t", "depth", "at", "token")

    def __init__(self, p, t):
        self.p, self.t = p, t
        self.depth = t.depth  # (inside backward_call: one level under the pass's event)
        self.at = p._clock()
        self.token = None

    def mark(self, token) -> None:
        """Module ``token``'s gradient is accumulated: its group ends now."""
        if token is self.token:  # a second parameter of the module that closed the last group
            return
        p = self.p
        now = p._clock()
        key = p._bw_keys.get(token)
        if key is None:
            key = p._bw_key(token)  # ("backward", "Linear.backward", its path)
        start, self.at, self.token = self.at, now, token
        if p._fast:  # recording everything: one append, as the engine's backward groups
            t = self.t
            buf = t.buf
            # pack() inline: a call per module per pass is measured here (benchmarks/torch_cost.py)
            buf += (start, now, key | self.depth << KEY_BITS)
            if len(buf) >= p._flush_len or now > t.flush_at:
                p._flush(t, now)
        else:
            p._emit_region(self.t, start, now, key, self.depth, None)


class BackwardPasses:
    """The backward side of one profile: the patched ``torch.autograd.backward`` and the
    per-module hooks it registered (removed at :meth:`remove`)."""

    def __init__(self):
        self.current = None  # the pass running: a _Pass or its compiled twin, TorchPass
        self._new_pass = _Pass  # (set by install, for its recorder)
        self._handles: list = []
        # parameters with our hook, by id (held: their ids stay theirs until remove())
        self._hooked: dict[int, torch.Tensor] = {}

    def install(self, patches, recorder) -> None:
        compiled = _c is not None and isinstance(recorder, _c.ModuleCall)
        self._new_pass = _c.TorchPass if compiled else _Pass
        patches.set(torch.autograd, "backward", self._wrap(torch.autograd.backward))
        # torch.autograd.grad (gradient penalties, meta-learning, physics losses): a pass too,
        # without per-module groups (it accumulates into no parameter's .grad)
        patches.set(torch.autograd, "grad", self._wrap(torch.autograd.grad))
        recorder.watch_modules(self.watch)

    def watch(self, module, entry) -> None:
        """A module got its path: hook its first trainable parameter it owns itself (one
        boundary per module; a parameter shared with a module hooked before stays with it)."""
        if not isinstance(module, nn.Module):
            return
        for param in module.parameters(recurse=False):
            if not param.requires_grad:
                continue
            if id(param) in self._hooked:
                return
            self._hooked[id(param)] = param
            self._handles.append(param.register_post_accumulate_grad_hook(self._hook(entry[1])))
            return

    def _hook(self, token):
        if _c is not None:
            return _c.TorchHook(self, token)  # (self.current.mark(token), without a frame)

        def accumulated(param) -> None:
            bw = self.current
            if bw is not None:
                bw.mark(token)

        return accumulated

    def _wrap(self, backward):
        run = self._run

        def backward_pass(*args, **kwargs):
            if _is_compiling():
                return backward(*args, **kwargs)
            p = hooks.active
            if p is None:
                return backward(*args, **kwargs)
            return p.backward_call(run, p, backward, args, kwargs)

        backward_pass.__wrapped__ = backward
        backward_pass.__doc__ = backward.__doc__
        return backward_pass

    def _run(self, p, backward, args, kwargs):
        prev, self.current = self.current, self._new_pass(p, p._state())
        try:
            return backward(*args, **kwargs)
        finally:
            self.current = prev

    def remove(self) -> None:
        """Remove every hook this profile registered."""
        self.current = None
        while self._handles:  # (one at a time: an interrupt leaves the rest for the next call)
            self._handles[-1].remove()
            self._handles.pop()
        self._hooked = {}
