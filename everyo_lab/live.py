"""The live refresher: redraws a dashboard a few times a second while the profiled cell runs.

A daemon thread polls how many events the run has recorded. It refreshes only when something
new was recorded (the dashboard then reads just the new rows, ``run.events_since(cursor)``),
one refresh at a time, and paces itself so that the refreshes take at most ``budget`` of the
wall time (the profiled code shares the interpreter with this thread): after a refresh that
cost ``c`` CPU seconds, the next one starts at least ``c / budget`` seconds after its start.

A longer pause does not make the new events cheaper, though: the part of a refresh that reads
and folds in the new events (the target's ``refresh`` may return its CPU seconds) grows with the
pause before it, and the run pays it whatever the pace. So refreshes start at least ``MIN_HZ``
times a second unless the refresh's other work (the report, the messages) alone needs a slower
pace: a refresh that rests in proportion to its catch-up would leave a fast-recording loop with
hardly any live refreshes at all (figures: benchmarks/RESULTS.md).

While the profiled code keeps every core busy (its process left less than three quarters of
a core free since the last poll), the default pace drops to ``BUSY_HZ``, the issue's floor of
two visible changes a second: each refresh's work in the kernel, the server and the browser
then comes out of the profiled code's share of the machine. An explicit ``hz`` is kept
whatever the load.
"""

from __future__ import annotations

import os
import threading
import time

# Refreshes a second at most: each one costs the page its messages, a layout, paint and commit,
# which a loop using every core pays for, and three a second still give at least two visible
# changes a second (figures: benchmarks/RESULTS.md, page_trace.py).
DEFAULT_HZ = 3.0
# The first poll: soon enough for a first chart within a second, late enough that the browser
# has drawn the new widget first, so the two do not share the loop's first moments, on a 2-core
# machine its costliest (figures: benchmarks/RESULTS.md, observer_variants.py).
FIRST_PAINT_S = 0.8
DEFAULT_BUDGET = 0.02
MIN_HZ = 3.0  # refreshes started a second at least, while events keep arriving (after the first)
# The default pace while the profiled code keeps every core busy. On the 2-core machine, with
# the CNN on OpenBLAS's two threads, the loop kept a median 0.908 of its steps at two
# refreshes a second (30 pairs, three runs) against 0.861 at three (40 pairs, four runs; the
# same runs' --no-live cells 0.955-0.999): benchmarks/observer_variants.py, RESULTS.md.
BUSY_HZ = 2.0
BUSY_SPARE_CORES = 0.75  # "every core busy": the process left less than this much of a core
BUSY_SAMPLE_S = 0.2  # the shortest span the process's CPU rate is measured over


class LiveRefresher:
    """Refresh ``target`` (anything with ``refresh(live=True)``) from ``run`` on a thread.

    Parameters
    ----------
    target
        Usually a :class:`~everyo_lab.widgets.dashboard.Dashboard`; ``refresh(live=True)``
        may return the CPU seconds it spent reading and folding in the new events.
    run
        The running ``Run`` (``events_since`` is polled to see whether anything is new).
    hz
        Refreshes per second while events keep arriving; at least 2. ``None`` (the default):
        ``DEFAULT_HZ``, or ``BUSY_HZ`` while the profiled code keeps every core busy.
    budget
        Largest share of wall time the refreshes may take.
    clock, wall
        The clocks of a refresh's CPU cost (the budget's) and of its duration (the pace's);
        injected for tests (a fake clock).
    process_clock, cores
        The process's CPU clock (every thread's) and the cores it may use, which tell whether
        the profiled code keeps every core busy; injected for tests.
    """

    def __init__(
        self,
        target,
        run,
        *,
        hz: float | None = None,
        budget: float = DEFAULT_BUDGET,
        clock=time.thread_time,
        wall=time.monotonic,
        process_clock=time.process_time,
        cores: int | None = None,
    ):
        if hz is not None and not hz >= 2:
            raise ValueError(f"hz must be at least 2 refreshes per second, got {hz}")
        if not 0 < budget <= 1:
            raise ValueError(f"budget must be in (0, 1], got {budget}")
        self.target = target
        self.run = run
        self.adaptive = hz is None
        self.period = 1.0 / (DEFAULT_HZ if hz is None else hz)
        self.process_clock = process_clock
        if cores is None:
            from everyo.environment_record import usable_cores

            cores = usable_cores() or os.cpu_count() or 1
        self.cores = cores
        self.busy = False  # the profiled code kept every core busy (the last measure)
        self._sample = (wall(), process_clock())
        self.budget = budget
        self.clock = clock
        self.wall = wall
        self.cursor = 0
        self.refreshes = 0
        self.skipped = 0
        self.errors: list[BaseException] = []
        self.busy_s = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> LiveRefresher:
        self._thread = threading.Thread(target=self._loop, name="everyo-live", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Ask the thread to finish and wait for it (a refresh in flight completes)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def poll(self) -> float:
        """One step: refresh when there is something new; return the seconds to wait next.

        The pace is from one refresh's start to the next: ``1 / hz`` at the fastest, slower
        where the budget asks, but no slower than ``MIN_HZ`` where the cost is the new events'
        (see the module). A refresh's own duration counts: it shares the GIL with the profiled
        code, so it lasts longer than its CPU time (``benchmarks/kernel_observer.py``: 7-16 ms
        for 5-11 ms of CPU; a first refresh catching up on 0.8 s of events, 21-35 ms for 15-29
        ms)."""
        period = self._period()
        cursor = self._recorded()
        status = self.run.status
        if cursor == self.cursor and self.refreshes and status == "running":
            self.skipped += 1
            return period
        self.cursor = cursor
        t0, w0 = self.clock(), self.wall()
        try:
            catch_up = self.target.refresh(live=True)
        except Exception as exc:  # keep the cell running; the final refresh will show it
            self.errors.append(exc)
            return max(self.period, 1.0)
        cost = self.clock() - t0
        self.busy_s += cost
        self.refreshes += 1
        fixed = cost - min(max(float(catch_up or 0.0), 0.0), cost)
        within_budget = cost / self.budget  # start to start: `cost` of it refreshing
        cap = max(1.0 / MIN_HZ, fixed / self.budget)
        interval = max(period, min(within_budget, cap))
        return max(0.1 * period, interval - (self.wall() - w0))

    def _period(self) -> float:
        """Seconds from one refresh's start to the next at the fastest: ``1 / hz``, or, by
        default, ``1 / BUSY_HZ`` while the process left less than ``BUSY_SPARE_CORES`` of a core
        free since the last measure (at least ``BUSY_SAMPLE_S`` long; shorter ones keep the last
        answer)."""
        if not self.adaptive:
            return self.period
        wall, cpu = self.wall(), self.process_clock()
        span = wall - self._sample[0]
        if span >= BUSY_SAMPLE_S:
            rate = (cpu - self._sample[1]) / span
            self.busy = rate >= self.cores - BUSY_SPARE_CORES
            self._sample = (wall, cpu)
        return 1.0 / BUSY_HZ if self.busy else self.period

    def _recorded(self) -> int:
        """Events recorded so far: ``num_events`` when the run has it (no rows are copied; the
        target reads the new rows itself), else the cursor ``events_since`` returns."""
        count = getattr(self.run, "num_events", None)
        if isinstance(count, int):
            return count
        return self.run.events_since(self.cursor)[1]

    def _loop(self) -> None:
        wait = FIRST_PAINT_S
        while not self._stop.wait(wait):
            wait = self.poll()
