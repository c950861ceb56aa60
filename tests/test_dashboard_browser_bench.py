"""The browser benchmark's plan and bookkeeping (`benchmarks/dashboard_browser.py`), without a
browser: which cells it runs in which order, the interval it puts on the pooled observer ratio,
and how `--write` replaces its figures in RESULTS.md. The figures themselves come only from a
real run (tests never assert times)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench(benchmark_script):
    return benchmark_script("dashboard_browser")


def test_pairs_alternate_which_runs_first_and_bad_counts_are_refused(bench):
    order, magic, nolive = bench.observer_plan(4)
    names = list(order)
    firsts = [names.index(a) < names.index(b) for a, b in magic]
    assert firsts == [False, True, False, True]  # plain1 magic1 · magic2 plain2 · plain3 magic3 ...
    assert all(order[b] is None for _, b in magic + nolive)  # every partner is a plain cell
    assert all("--no-live" in order[a] for a, _ in nolive)
    for bad in (0, 1, 3):
        with pytest.raises(ValueError, match="even number"):
            bench.observer_plan(bad)


def test_loops_are_checked_and_each_runs_after_the_cell_that_builds_its_model(bench):
    assert bench.parse_loops("mlp, cnn,mlp") == ["mlp", "cnn"]
    for bad in ("", "resnet", "cnn,gpt"):
        with pytest.raises(ValueError, match="--observer"):
            bench.parse_loops(bad)
    order, _, _ = bench.observer_plan(2)
    cells, where = bench.cells(order, ["cnn", "mlp"])
    assert len(where) == 2 * len(order)
    assert cells[-1] == bench.MILLION
    assert min(where.values()) == bench.FIRST_OBSERVER + 1  # after the first loop's set-up
    assert cells[bench.FIRST_OBSERVER - 2] == bench.harness.WORKLOADS["cnn"]
    assert "--label cores" in cells[bench.FIRST_OBSERVER - 1]  # the every-core liveness cell
    for loop in ("cnn", "mlp"):
        indices = sorted(i for k, i in where.items() if k.startswith(f"{loop}/"))
        assert cells[indices[0] - 1] == bench.harness.WORKLOADS[loop]  # its set-up comes first
        assert indices == list(range(indices[0], indices[0] + len(order)))
    labels = []
    for key, index in where.items():
        text = cells[index]
        name = key.split("/")[1]
        assert text.startswith("%%everyo_profile") == (order[name] is not None), key
        assert f"STEPS {key.replace('/', '_')}" in text
        labels += re.findall(r"--label (\S+)", text)
    assert len(labels) == len(set(labels)) == 2 * (len(order) - 2)  # one label per magic cell


def test_pooled_interval_holds_the_pooled_ratio_and_widens_with_noise(bench):
    steady = [(90, 100), (180, 200), (45, 50)]
    assert bench.pooled_interval(steady) == pytest.approx((0.9, 0.9))
    noisy = [(60, 100), (120, 100), (95, 100), (80, 100), (100, 90)]
    pooled = sum(a for a, _ in noisy) / sum(b for _, b in noisy)
    lo, hi = bench.pooled_interval(noisy)
    assert lo < pooled < hi
    lo80, hi80 = bench.pooled_interval(noisy, level=0.8)
    assert lo <= lo80 and hi80 <= hi
    assert bench.pooled_interval(noisy) == (lo, hi)  # seeded: the same on every run


def _figures(bench) -> dict:
    loop = {"wall": [0.9, 1.0], "pooled": 0.95, "pooled_interval": (0.9, 1.0)}
    loop.update(cpu=[0.9, 1.0], nolive_wall=[1.0], nolive_cpu=[1.0])
    for kind in ("plain", "magic", "nolive"):
        loop[f"used_{kind}"] = dict.fromkeys(bench.GROUPS, 1.0)
        loop[f"sched_{kind}"] = (1, 2)
    return {
        "first_chart_s": 0.8,
        "event_updates_per_s": 2.8,
        "refreshes_per_s": 2.8,
        "busy_updates_per_s": 2.5,
        "busy_redraws_per_s": 3.0,
        "cores_updates_per_s": 2.1,
        "event_updates_shown_per_s": 3.0,
        "busy_updates_shown_per_s": 2.7,
        "cores_updates_shown_per_s": 2.4,
        "cores_redraws_per_s": 2.2,
        "longest_task_ms": 0,
        "longtasks_over_200ms": 0,
        "live_bytes": 500_000,
        "plotly_transfers": 1,
        "loops": ["cnn"],
        "observer": {"cnn": loop},
        "load_ext_s": 0.3,
        "state_bytes": 200_000,
        "notebook_bytes": 280_000,
        "million_bytes": 170_000,
        "steps": {"cnn/plain1": 150},
        "cpu": {"cnn/plain1": 2.9},
        "order": ["cnn/plain1"],
        "running_s": 4.0,
        "longtasks": [],
        "million_events": 1e6,
        "million_board": {},
        "load_before": "load average 0.5",
        "load_after": "load average 0.6",
    }


def test_liveness_is_counted_once_the_first_chart_is_shown(bench):
    """The rate a user sees: changes a second from the first picture on (the wait for it is the
    first-chart figure), beside the rate over the whole cell."""
    sample = {"prompt": "[*]:", "board": True}
    bars = [(0, 0, "empty"), (800, 4, "a"), (1300, 9, "b"), (1800, 14, "c"), (2300, 19, "d")]
    samples = [{**sample, "t": t, "bars": n, "header": h} for t, n, h in bars]
    watch = bench.harness.Watch(started_ms=0.0, samples=[*samples, {"prompt": "[5]:"}])
    assert watch.changes_per_second("header", after_first_chart=True) == pytest.approx(3 / 1.5)
    assert watch.changes_per_second("header") == pytest.approx(4 / 2.3)
    no_chart = bench.harness.Watch(started_ms=0.0, samples=samples[:1])
    assert no_chart.changes_per_second("header", after_first_chart=True) == 0.0
    assert "| 2.4 (2.1; 2.2) | ≥ 2 |" in "\n".join(bench.table(_figures(bench)))


def test_write_replaces_the_figures_and_keeps_the_notes_after_them(bench, tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text(
        "# Results\n\n"
        f"{bench.SECTION}\n\nold intro\n\n| old | table |\n\nold notes\n\n"
        "### A note written by hand\n\nkept text\n\n"
        "## The next section\n\nalso kept\n"
    )
    bench.write_results(_figures(bench), results)
    text = results.read_text()
    assert "old intro" not in text and "| old | table |" not in text and "old notes" not in text
    assert "observer effect, cnn" in text and "0.950 (0.900–1.000)" in text
    section = text.index(bench.SECTION)
    note = text.index("### A note written by hand")
    assert section < text.index("| what | measured | target |") < note
    assert (
        "\n\n### A note written by hand\n\nkept text\n\n## The next section\n\nalso kept\n" in text
    )
    bench.write_results(_figures(bench), results)  # twice: the same file
    assert results.read_text() == text
