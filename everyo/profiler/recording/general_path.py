"""The general module-call path: module events with CUDA device times, memory or op columns.

Slower than the primitives' path (every event through ``_emit``, each optional column computed
in Python), so a recorder switches to it only when one of those is on (``_use_general_path``):
a CPU-only run never pays for it just because CuPy is installed.
"""

from __future__ import annotations

import numpy as np

from everyo.profiler.recording import regions
from everyo.profiler.recording.contract import check_call_args
from everyo.profiler.recording.gpu import CudaTimer
from everyo.profiler.recording.store_writer import store_rows


class GeneralPath:
    """The general module-call path of a recorder (mixed into ``recorder._RecorderBody``)."""

    def _start_cuda_timing(self) -> None:
        """The first module call on CUDA tensors: from now on, module events get device times
        (a CPU-only run never pays for the general path just because CuPy is installed)."""
        gpu = CudaTimer.create()
        if gpu is None:
            self._cuda_possible = False
            self.configure(python_roots=False)
            return
        self.store.add_column("device_ns")
        self.gpu = gpu
        self._use_general_path()

    def _use_general_path(self) -> None:
        """Every module call through ``_module_call_full`` from now on (no per-call check)."""
        self.module_call = self._module_call_full
        self.configure(general=True)  # the compiled Module.__call__ then calls it by name

    def _module_call_full(self, module, forward, args, kwargs):
        """module_call with CUDA timing, memory or op columns on (the general, slower path)."""
        args, kwargs = check_call_args(args, kwargs)
        t = self._state()
        if t.keymap is None:
            return self._root_call(t, module, forward, args, kwargs)
        entry = t.keymap.get(id(module)) or self._unlisted(t, module)
        depth, prev = t.depth, t.scope
        if depth >= self._max_depth:
            self._region_too_deep(depth)
        gpu = self.gpu
        start = None
        try:  # (the thread's state changes as in PyModuleCall.module_call)
            t.depth, t.scope = depth + 1, entry[1]
            marks = gpu.begin(args) if gpu is not None else None
            start = self._clock()
            out = forward(*args, **kwargs)
            end = self._clock()
        except BaseException:
            t.depth, t.scope = depth, prev
            if start is not None:
                self._failed(t, entry[0], depth, start, prev)
            raise
        t.depth, t.scope = depth, prev
        try:
            if t.open and t.open[-1].depth > depth:
                regions.close_abandoned(self, t, depth + 1)
            before = t.flushed + len(t.buf) // self._width
            self._emit(
                t,
                (start, end - start, entry[0], depth),
                self._tail(args, kwargs, out, end, (-1, -1)),  # a module's FLOPs: its ops' sum
                None,
                end,
            )
        except BaseException:  # an interrupt before the event was kept (issue 44): kept
            if depth < t.keep_below:  # without its optional columns when events inside it
                self._emit(t, (start, end - start, entry[0], depth), self._pad, None, end)
            raise  # were, so that they keep their parent
        after = t.flushed + len(t.buf) // self._width
        if marks is not None and after > before:
            gpu.end(marks, (t, after - 1))
        return out

    def _tail(self, args, kwargs, out, end, counts: tuple) -> tuple:
        """The optional columns of a module or op event: shape id, (FLOPs, bytes), memory."""
        tail = (self._shape_id(args, kwargs, out),) if self.record_shapes else ()
        if self.record_ops:
            tail += counts
        if self.memory is not None:
            tail += (self.memory.on_output(out, end - self.origin_ns),)
        return tail

    # -- CUDA device times ---------------------------------------------------------------------
    def device_times(self) -> tuple[np.ndarray, np.ndarray]:
        """``(store rows, device ns)`` of the module events timed on a GPU (at stop)."""
        if self.gpu is None:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        idents, ns = self.gpu.resolve()
        rows = store_rows(idents)
        keep = rows >= 0
        return rows[keep], ns[keep]
