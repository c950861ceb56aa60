"""How the cost of reading a run grows with its size: summary, Chrome-trace export (plain and
gzip) and the flame chart's level of detail at 10^4, 10^5 and 10^6 events.

    python benchmarks/growth.py [--quick]      (the same as: run.py --only growth)

The runs are synthetic (``profiler_overhead.synthetic_run``: a root module with three children,
written straight into a store), so every size has the same shape. Times are the best of three
(the least disturbed run on a shared machine). Targets (TARGETS.md): summary of 1,000,000 events
<= 0.5 s, Chrome export of 1,000,000 events <= 2 s, at most 20,000 shapes drawn per view.
"""

from __future__ import annotations

import os
import tempfile

from profiler_overhead import synthetic_run, timed_s
from suite import Section, optional, script_main, verdict

from everyo.profiler.analysis import run_analysis as analysis
from everyo.profiler.export.chrome import export_chrome_trace


def section(quick: bool = False) -> Section:
    s = Section(
        "growth",
        "Profiler: summary, export and level of detail by run size",
        "Synthetic runs (a root module with three children per call); best of three wall times. "
        "Level of detail: `everyo_lab.views.flame.flame_figure.flame_bars` on the whole run "
        "at 1,600 px "
        "(bars drawn, at most 20,000), from the run's snapshot.",
        [
            "events",
            "summary s",
            "Chrome export s (MB)",
            "gzip export s (MB)",
            "level of detail s (bars)",
            "targets",
        ],  # fmt: skip
    )
    flame = optional("everyo_lab.views.flame.flame_figure")
    if flame is None:
        s.notes.append("everyo_lab is not importable: level-of-detail column skipped")
    sizes = [10_000] if quick else [10_000, 100_000, 1_000_000]
    with tempfile.TemporaryDirectory() as d:
        for n in sizes:
            run = synthetic_run(n)
            t_sum = timed_s(lambda r=run: analysis.summarize(r), 3)
            plain, gz = os.path.join(d, "t.json"), os.path.join(d, "t.json.gz")
            t_exp = timed_s(lambda r=run, p=plain: export_chrome_trace(r, p), 3)
            t_gz = timed_s(lambda r=run, p=gz: export_chrome_trace(r, p), 1 if n >= 10**6 else 3)
            cells = [f"{run.num_events:,}", f"{t_sum:.3f}",
                     f"{t_exp:.3f} ({os.path.getsize(plain) / 1e6:.1f})",
                     f"{t_gz:.3f} ({os.path.getsize(gz) / 1e6:.1f})"]  # fmt: skip
            targets = []
            if flame is not None:
                batch = run.snapshot()
                bars = flame.flame_bars(batch)[0]
                t_lod = timed_s(lambda b=batch: flame.flame_bars(b), 3)
                n_bars = _count(bars)
                cells.append(f"{t_lod:.3f} ({n_bars:,})")
                targets.append(f"≤ 20,000 bars: {verdict(n_bars, 20_000)}")
            else:
                cells.append("–")
            if n >= 1_000_000:
                targets += [f"summary ≤ 0.5 s: {verdict(t_sum, 0.5)}",
                            f"export ≤ 2 s: {verdict(t_exp, 2.0)}"]  # fmt: skip
            s.row(*cells, "; ".join(targets) or "–")
    return s


def _count(bars) -> int:
    """Bars in what ``flame_bars`` returns (an object with per-bar arrays, or a sequence)."""
    for attr in ("row", "start", "x0", "base"):
        col = getattr(bars, attr, None)
        if col is not None:
            return len(col)
    try:
        return len(bars)
    except TypeError:
        return -1


def main(argv=None) -> None:
    script_main(section, __doc__, argv)


if __name__ == "__main__":
    main()
