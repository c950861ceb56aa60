"""One point of a batch-size sweep: build the batch, measure its peak memory, time it, clean up.

An out-of-memory point (``MemoryError``, CuPy's or torch's ``OutOfMemoryError``, torch's CPU
allocator failing, or the sweep's ``memory_limit`` exceeded) ends cleanly: every reference to the
batch and to the failed call's frames is dropped, garbage is collected and CuPy's and torch's
cached blocks are freed, so memory returns to its level before the point.

Peak memory is measured where the workload allocates (:data:`MEMORY_SOURCES`): host allocations
traced by :mod:`tracemalloc` for everyo and NumPy, CuPy's pool on a GPU, torch's CUDA allocator,
and, for torch on the CPU (whose allocator tracemalloc does not see), the process's resident-set
growth. Each row says which (``memory_source``) and every view labels the figure with it.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from everyo.bench import torch_memory
from everyo.bench.call_memory import traced_peak, trim_heap
from everyo.bench.devices import free_gpu_pool, gpu_pool_bytes, is_out_of_memory, on_gpu
from everyo.bench.stats import summarize
from everyo.bench.timing import Timer
from everyo.machine_state import MachineState, MachineWatch
from everyo.thread_policy import ThreadPolicy

__all__ = [
    "SweepRow",
    "SweepProgress",
    "measure_point",
    "measure_point_on_worker",
    "MemoryLimitExceeded",
    "MEMORY_SOURCES",
    "memory_label",
]

MEMORY_SOURCES = {
    "tracemalloc": "host",
    "cupy": "GPU",
    "torch.cuda": "GPU, torch allocator",
    "rss": "host, resident-set growth",
}
"""A row's ``memory_source`` and the label every view gives its peak memory: host allocations
traced by tracemalloc, CuPy's pool, torch's CUDA allocator (``max_memory_allocated``), or the
process's resident-set growth (torch on the CPU)."""


def memory_label(rows) -> str:
    """The label of the peak-memory figure of ``rows`` (:class:`SweepRow` objects or their
    dicts), from their measured points' ``memory_source``: ``"host"``, ``"GPU"``,
    ``"GPU, torch allocator"`` or ``"host, resident-set growth"``. A row without a source (one
    saved before sources were recorded) is tracemalloc's, or CuPy's when it has ``gpu_memory``.
    Different sources in one sweep are all named, in :data:`MEMORY_SOURCES` order."""
    found = set()
    for row in rows:
        get = row.get if isinstance(row, dict) else lambda k, r=row: getattr(r, k, None)
        if get("status") != "ok":
            continue
        gpu = get("gpu_memory") is not None
        found.add(get("memory_source") or ("cupy" if gpu else "tracemalloc"))
    return " / ".join(label for key, label in MEMORY_SOURCES.items() if key in found) or "host"


class MemoryLimitExceeded(MemoryError):
    """A point needed more memory than the sweep's ``memory_limit``."""


@dataclass
class SweepRow:
    """One measured batch size. Times in milliseconds, memory in bytes.

    ``status`` is ``"ok"``, ``"oom"`` (out of memory), ``"error"`` (another exception; see
    ``message``) or ``"skipped"`` (larger than a size that ran out of memory). ``throughput`` is
    samples/s at the median latency, which interference from other processes hardly moves;
    ``p5_ms`` and ``p95_ms`` bound the spread of the timed calls.
    ``peak_memory`` is host bytes (the batch plus the call's peak allocations); ``gpu_memory``
    the GPU bytes the call needed (CuPy's pool or torch's CUDA allocator; ``None`` on a CPU);
    ``memory_source`` says how they were measured (a key of :data:`MEMORY_SOURCES`).
    ``worker`` names the worker that measured the point when an executor ran it (``None`` in
    process).

    ``verdict`` is the machine's state while the point was timed (``"quiet"``, ``"busy"``,
    ``"contended"``, ``"unknown"``; ``machine`` holds all of it); ``reliable`` is False for a
    point that broke from its neighbours and stayed inconsistent when re-measured, and
    ``note`` says why, or what a re-measurement found. ``off_trend`` is True for a point that
    stayed off its neighbours' trend when re-measured with rounds that agree: a repeatable
    effect of this machine at this size (``faults_per_call``, the page faults of each timed
    call, often says which), shown and explained rather than recommended from.
    :attr:`trusted` combines them: a sweep recommends only from trusted points.
    """

    batch_size: int
    status: str
    message: str = ""
    n: int = 0
    mean_ms: float | None = None
    median_ms: float | None = None
    std_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    p95_ms: float | None = None
    throughput: float | None = None
    peak_memory: int | None = None
    gpu_memory: int | None = None
    p5_ms: float | None = None
    worker: str | None = None
    verdict: str | None = None
    reliable: bool = True
    note: str = ""
    machine: dict | None = None
    memory_source: str | None = None
    faults_per_call: float | None = None
    off_trend: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def trusted(self) -> bool:
        """Measured, consistent with its neighbours, and not on a contended machine."""
        return self.ok and self.reliable and not self.off_trend and self.verdict != "contended"

    @property
    def flag(self) -> str | None:
        """``"unreliable"``, ``"contended"``, ``"off-trend"`` or ``None``: why a measured
        point is not trusted."""
        if not self.ok:
            return None
        if not self.reliable:
            return "unreliable"
        if self.verdict == "contended":
            return "contended"
        return "off-trend" if self.off_trend else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SweepProgress:
    """What ``sweep_batch_sizes(on_point=...)`` reports when a point starts and when it ends.

    ``index`` counts points from 1; ``total`` is the number of points a list of sizes has
    (``None`` for ``"auto"``, which stops where memory runs out). ``row`` is ``None`` when the
    point starts and its :class:`SweepRow` when it ends; ``elapsed_s`` is the point's time so
    far (0 at the start). ``rows`` holds every finished point, in the order measured.
    ``rechecking`` is not empty once every point is measured and the sweep re-measures these
    sizes (suspects and their neighbours, interleaved): ``batch_size`` is the first of them.
    """

    index: int
    total: int | None
    batch_size: int
    row: SweepRow | None = None
    elapsed_s: float = 0.0
    rows: tuple[SweepRow, ...] = ()
    rechecking: tuple[int, ...] = ()

    @property
    def done(self) -> bool:
        return self.row is not None


def measure_point(
    step: Callable[[Any], Any],
    make_batch: Callable[[int], Any],
    batch_size: int,
    warmup: int,
    repeat: int,
    memory_limit: int | None = None,
    clock: Callable[[], float] | None = None,
    synchronize: Callable[[], None] | None = None,
    threads: Any = None,
) -> SweepRow:
    """Measure ``step(make_batch(batch_size))``: peak memory of one call, then timed calls,
    with the machine's state while they ran.

    Module-level (and so picklable) so that any executor can run it. Garbage is collected
    after the point (a full collection costs tens of milliseconds in a big process; the sweep
    collects once before its first point). ``threads`` is the thread policy to apply around
    the point (an executor's worker applies it there; in process the sweep applies it once).
    """
    try:
        with ThreadPolicy(threads) as policy:
            return _measure(
                step,
                make_batch,
                batch_size,
                warmup,
                repeat,
                memory_limit,
                clock,
                synchronize,
                policy,
            )
    except Exception as exc:  # noqa: BLE001 - every failure becomes a row, the sweep goes on
        status = "oom" if is_out_of_memory(exc) else "error"
        message = f"{type(exc).__name__}: {exc}"
        # drop the traceback: its frames hold the batch and the call's intermediates
        exc.__traceback__ = None
        return SweepRow(batch_size, status, message)
    finally:
        gc.collect()
        free_gpu_pool()
        trim_heap()  # (a torch point's freed memory would otherwise hide the next one's growth)


def measure_point_on_worker(*args: Any, token: str = "") -> tuple[SweepRow, dict]:
    """:func:`measure_point` where an executor runs it: the row names the worker, and comes
    with that worker's environment record (computed once per worker process).

    ``token`` is unused here: it keeps one sweep's tasks apart from another's in Dask.
    """
    from everyo.bench.placement import worker_environment, worker_name

    row = measure_point(*args)
    row.worker = worker_name()
    return row, worker_environment()


def _measure(
    step, make_batch, batch_size, warmup, repeat, memory_limit, clock, synchronize, policy
):
    gpu_before = gpu_pool_bytes()  # before the batch, so that the GPU figure includes it
    batch = make_batch(batch_size)
    if torch_memory.holds_torch(batch) or torch_memory.holds_torch(step):
        cuda = torch_memory.torch_on_cuda(batch) or torch_memory.torch_on_cuda(step)
        peak, gpu_peak, source = torch_memory.probe_torch_memory(lambda: step(batch), cuda=cuda)
        peak += _nbytes(batch)
        if gpu_peak is not None:
            gpu_peak += _nbytes(batch, gpu=True)
    else:
        peak, gpu_after = _probe_memory(step, batch)
        gpu_peak = None if gpu_after is None else max(gpu_after - (gpu_before or 0), 0)
        source = "tracemalloc" if gpu_peak is None else "cupy"
    if memory_limit is not None:
        on_device = on_gpu(batch) or source == "torch.cuda"  # (a CPU batch, a model on CUDA)
        used = gpu_peak if gpu_peak is not None and on_device else peak
        if used > memory_limit:
            raise MemoryLimitExceeded(
                f"peak {_mib(used)} exceeds memory_limit {_mib(memory_limit)}"
            )
    timer = Timer(clock=clock, synchronize=synchronize)
    watch = MachineWatch(threads_policy=policy.policy, threads_applied=policy.applied).start()
    timer.run(lambda: step(batch), warmup, 0, inputs=(step, batch))
    faults = page_faults()
    times = timer.run(lambda: step(batch), 0, repeat)
    faults = None if faults is None else (page_faults() - faults) / len(times)
    machine = watch.stop()
    row = row_from_times(batch_size, times, peak=peak, gpu=gpu_peak, machine=machine)
    row.memory_source = source
    row.faults_per_call = faults
    return row


def page_faults() -> int | None:
    """The page faults this thread has taken so far (minor ones: a fresh page touched the
    first time), ``None`` where the platform does not count them."""
    try:
        import resource

        who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
        return resource.getrusage(who).ru_minflt
    except (ImportError, OSError):
        return None


def row_from_times(
    batch_size: int,
    times: Any,
    *,
    peak: int | None = None,
    gpu: int | None = None,
    machine: MachineState | None = None,
) -> SweepRow:
    """A measured row from its timed calls (seconds) and the machine's state over them."""
    s = summarize(times)
    return SweepRow(
        batch_size=batch_size,
        status="ok",
        n=s["n"],
        mean_ms=s["mean"] * 1e3,
        median_ms=s["median"] * 1e3,
        std_ms=s["std"] * 1e3,
        min_ms=s["min"] * 1e3,
        max_ms=s["max"] * 1e3,
        p95_ms=s["p95"] * 1e3,
        p5_ms=s["p5"] * 1e3,
        throughput=batch_size / s["median"],  # the median resists interference spikes
        peak_memory=peak,
        gpu_memory=gpu,
        verdict=None if machine is None else machine.verdict,
        machine=None if machine is None else machine.to_dict(),
    )


def _probe_memory(step, batch) -> tuple[int, int | None]:
    """Peak host bytes of one untimed call (tracemalloc), and CuPy's pool bytes after it.

    The host figure counts the batch (allocated just before) and everything the call allocates
    at its peak; it is deterministic for NumPy workloads, which is what makes ``memory_limit``
    reproduce an out-of-memory boundary on a CPU. CuPy's pool keeps the blocks freed during the
    call, so its size after the call is the call's peak.
    """
    return traced_peak(lambda: step(batch)) + _nbytes(batch), gpu_pool_bytes()


def _nbytes(obj: Any, depth: int = 0, *, gpu: bool = False) -> int:
    """Bytes of the arrays or tensors in a batch: the host ones (GPU pool bytes are counted
    apart), or with ``gpu=True`` the GPU ones (torch's allocator counts only what the call
    allocates, not the batch allocated before it)."""
    if isinstance(obj, (tuple, list)) and depth < 3:
        return sum(_nbytes(x, depth + 1, gpu=gpu) for x in obj)
    if isinstance(obj, dict) and depth < 3:
        return sum(_nbytes(x, depth + 1, gpu=gpu) for x in obj.values())
    if on_gpu(obj, 3) != gpu:
        return 0
    torch = torch_memory.torch_module()
    if torch is not None and isinstance(obj, torch.Tensor):
        return int(obj.nelement() * obj.element_size())
    data = getattr(obj, "data", obj)  # everyo tensors hold their array in .data
    nbytes = getattr(data, "nbytes", None)
    return int(nbytes) if isinstance(nbytes, int) else 0


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"
