"""What ``everyo.profiler.load`` costs on everyo's own exports: CPU time and peak resident memory
of reading a file a block of events at a time (``load``) beside reading it whole (``json.load``
and the same readers, what ``load`` did before issue 36), each in a fresh process.

    python benchmarks/load_memory.py [--events 1000000] [--formats events raw chrome]
                                     [--before TREE] [--repeat N]

Issue 44's targets, for ``--events 700000``: ``load`` at 250,000 events per CPU second or more,
with a peak resident memory no larger than the file; each line says whether it met them.

Prints one line per format and reader, then the ratios streamed / whole. ``--before TREE``
adds ``load`` with another tree's code (a checkout with its extensions built) on the same files,
the readers taking turns ``--repeat`` times (medians shown): a before/after comparison in one
run. Threads pinned to one (threadpoolctl); the machine's load average is printed with the
results: on a shared machine compare the CPU times, not the wall times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

READ = """
import sys, time
from pathlib import Path
from threadpoolctl import threadpool_limits
threadpool_limits(1)
from everyo.profiler.export import reader
path = Path(sys.argv[1])
t = time.process_time()
if sys.argv[2] == "streamed":
    run = reader.read_run(path)
else:
    run = reader._parse(reader._read_json(path), path.name)
cpu = time.process_time() - t
# VmHWM, this process's own high-water mark: ru_maxrss keeps the parent's peak across fork and
# exec (the parent holds the 700,000-event run: every figure read at least its ~170 MB)
peak = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(run.num_events, cpu, peak)
"""


def make_run(n: int):
    """A run of ``n`` module events (parent and child pairs), with shapes, built directly."""
    import numpy as np

    from everyo.profiler.storage.run import Run
    from everyo.profiler.storage.store import EventStore

    store = EventStore(optional=["shape"])
    keys = np.array(
        [store.intern_key("module", f"Layer{i}", f"0.{i}") for i in range(20)], np.int32
    )
    sid = store.intern_shape("[(32, 64)] -> (32, 64)")
    store.add_thread(1234, "MainThread")
    m = n // 2
    start = np.arange(m, dtype=np.int64) * 1000
    cols = {
        "start_ns": np.empty(2 * m, np.int64),
        "dur_ns": np.empty(2 * m, np.int64),
        "depth": np.empty(2 * m, np.int16),
        "key": keys[np.arange(2 * m) % 20],
        "thread": np.zeros(2 * m, np.int16),
        "shape": np.full(2 * m, sid, np.int32),
    }
    cols["start_ns"][0::2], cols["dur_ns"][0::2], cols["depth"][0::2] = start + 100, 500, 1
    cols["start_ns"][1::2], cols["dur_ns"][1::2], cols["depth"][1::2] = start, 900, 0
    store.append(cols)
    run = Run(store, label="load benchmark")
    run.finish(wall_ns=m * 1000)
    return run


def export(run, folder: Path, fmt: str) -> Path:
    from everyo.profiler.export.chrome import export_chrome_trace
    from everyo.profiler.export.events import export_json

    path = folder / f"{fmt}.json"
    if fmt == "chrome":
        return export_chrome_trace(run, path)
    return export_json(run, path, format=fmt)


HERE = Path(__file__).resolve().parents[1]


def measure(path: Path, how: str, tree: Path = HERE) -> tuple[int, float, int]:
    """``(events, CPU s, peak RSS bytes)`` of one read in a fresh process, with ``tree``'s code
    (its folder the current one, so that ``-c`` imports it first)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", READ, str(path), how],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
        env=env,
    )
    n, cpu, peak = out.stdout.split()
    return int(n), float(cpu), int(peak)


def median_of(runs: list) -> tuple[int, float, int]:
    runs = sorted(runs, key=lambda r: r[1])
    n, cpu, _ = runs[len(runs) // 2]
    peaks = sorted(r[2] for r in runs)
    return n, cpu, peaks[len(peaks) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--formats", nargs="+", default=["events", "raw", "chrome"])
    parser.add_argument("--before", type=Path, help="a tree whose load() to time beside this one")
    parser.add_argument("--repeat", type=int, default=1, help="reads of each kind (medians)")
    args = parser.parse_args()
    run = make_run(args.events)
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    readers = {"whole": ("whole", HERE), "streamed": ("streamed", HERE)}
    if args.before:
        readers["before"] = ("streamed", args.before.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats:
            path = export(run, Path(tmp), fmt)
            size = path.stat().st_size
            runs: dict[str, list] = {name: [] for name in readers}
            for _ in range(args.repeat):  # the readers take turns: the machine's load is shared
                for name, (how, tree) in readers.items():
                    runs[name].append(measure(path, how, tree))
            got = {name: median_of(r) for name, r in runs.items()}
            for how, (n, cpu, peak) in got.items():
                rate = n / cpu if cpu else float("inf")
                print(
                    f"{fmt:7s} {how:9s} {n:,} events, file {size / 1e6:.0f} MB: "
                    f"CPU {cpu:.2f} s ({rate / 1e3:.0f}k events/s: target >= 250k "
                    f"{'met' if rate >= 250e3 else 'missed'}), peak RSS {peak / 1e6:.0f} MB "
                    f"({peak / size:.2f}x the file: target <= 1x "
                    f"{'met' if peak <= size else 'missed'})"
                )
            (_, cpu_w, peak_w), (_, cpu_s, peak_s) = got["whole"], got["streamed"]
            print(f"{fmt:7s} streamed / whole: CPU {cpu_s / cpu_w:.2f}x, peak RSS "
                  f"{peak_s / peak_w:.2f}x")  # fmt: skip
            if "before" in got:
                _, cpu_b, peak_b = got["before"]
                print(f"{fmt:7s} streamed / before: CPU {cpu_s / cpu_b:.2f}x, peak RSS "
                      f"{peak_s / peak_b:.2f}x")  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
