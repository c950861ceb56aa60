"""The teaching labs in examples/: built from their sources, committed without outputs; every
solution notebook runs top to bottom under nbclient with all its self-checks passing; every
student notebook, with ``EVERYO_LAB_CHECKS=report``, runs top to bottom too, printing a "Not
yet" line for each unmet check; in the default mode a student notebook (lab 01) stops at its
first check with a one-line hint.

CI runs them at ``EVERYO_LAB_SIZE=small``. An executed lab stays small (<= 1 MB with outputs
and widget state) and every profiled cell keeps its static rendering.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LABS = sorted(EXAMPLES.glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = EXAMPLES / "solutions"
MAX_EXECUTED_BYTES = 1_000_000
STATE_MIME = "application/vnd.jupyter.widget-state+json"


def _kernel_available() -> bool:
    from jupyter_client.kernelspec import KernelSpecManager

    return "python3" in KernelSpecManager().find_kernel_specs()


needs_kernel = pytest.mark.skipif(not _kernel_available(), reason="no 'python3' Jupyter kernelspec")


def _builder():
    spec = importlib.util.spec_from_file_location("build_labs", EXAMPLES / "build_labs.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("build_labs", module)
    spec.loader.exec_module(module)
    return module


def _code(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def _tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _execute(path: Path, folder: Path, monkeypatch):
    """Run ``path`` in ``folder`` at the small size; return the notebook (as executed) and the
    error nbclient raised, if any."""
    monkeypatch.setenv("EVERYO_LAB_SIZE", "small")
    # one BLAS thread, as in conftest.py: CI has 2 cores, and an oversubscribed multi-threaded
    # BLAS makes a batch-128 matmul slower than batch 8 (measured on a loaded 2-core machine)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(name, "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        return nb, exc
    return nb, None


def _errors(cells) -> list[str]:
    return [
        f"{o.ename}: {o.evalue}"
        for c in cells
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]


def _printed(cells) -> str:
    """What the cells printed (their stream outputs)."""
    return "".join(o.get("text", "") for c in cells for o in c.get("outputs", []) if o.get("name"))


# -- the sequence as committed ----------------------------------------------------------------


def test_the_sequence_is_nine_numbered_labs_with_solutions():
    names = [p.stem for p in LABS]
    assert [n[:2] for n in names] == [f"{i:02d}" for i in range(1, 10)], names
    assert sorted(p.stem for p in SOLUTIONS.glob("*.ipynb")) == names


def test_notebooks_are_built_from_their_sources():
    builder = _builder()
    assert builder.stale() == [], "run: python examples/build_labs.py"


def test_labs_are_committed_without_outputs():
    for path in [*LABS, *SOLUTIONS.glob("*.ipynb")]:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata.kernelspec.name == "python3", path.name
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_each_lab_states_its_goal_and_has_exercises_with_checks(path):
    nb = nbformat.read(path, as_version=4)
    intro = nb.cells[0].source
    assert intro.startswith(f"# Lab {path.stem[:2]}:"), intro.splitlines()[0]
    goal = [line for line in intro.splitlines() if line.startswith("**Goal:**")]
    assert len(goal) == 1 and "**Time:**" in intro and "**Guide sections:**" in intro
    code = _code(nb)
    assert f'start_lab("{path.stem}"' in code
    exercises = [i for i, c in enumerate(nb.cells) if "exercise" in _tags(c)]
    assert 2 <= len(exercises) <= 4, f"{len(exercises)} exercises"
    for i in exercises:
        assert "TODO" in nb.cells[i].source
        # a check follows each exercise before the next exercise begins
        following = [c for c in nb.cells[i + 1 :] if "exercise" in _tags(c) or "check" in _tags(c)]
        assert following and "check" in _tags(following[0]), nb.cells[i].source[:60]
    assert "lab.record(" in code
    solved = nbformat.read(SOLUTIONS / path.name, as_version=4)
    assert len(solved.cells) == len(nb.cells)
    for mine, theirs in zip(nb.cells, solved.cells):
        if "exercise" in _tags(mine):
            assert "solution" in _tags(theirs) and "TODO" not in theirs.source
        else:
            assert mine.source == theirs.source


# -- executed ----------------------------------------------------------------------------------


@pytest.mark.slow
@needs_kernel
@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_solution_runs_with_every_check_passing(path, tmp_path, monkeypatch):
    solved = SOLUTIONS / path.name
    nb, error = _execute(solved, tmp_path, monkeypatch)
    assert error is None, f"{solved.name} failed: {str(error)[-1500:]}"
    assert _errors(nb.cells) == []

    # every lab.check call printed its pass line, and the results file lists them all; a check
    # the machine left nothing to judge (lab 05's budget, every point untrusted) says
    # "inconclusive: ... rerun" in its place, never "Not yet"
    expected = len(re.findall(r"\blab\.check\(", _code(nb)))
    record = json.loads((tmp_path / "results" / f"{path.stem}.json").read_text())
    assert record["lab"] == path.stem and record["size"] == "small"
    unjudged = [t for t in record["checks_not_yet"] if t.startswith("inconclusive: ")]
    assert unjudged == record["checks_not_yet"], record["checks_not_yet"]
    assert len(record["checks_passed"]) + len(unjudged) == expected, record["checks_passed"]
    printed = _printed(nb.cells)
    assert printed.count("\u2713 check") + printed.count("? check") == expected
    assert record["environment"]["python"]["version"]

    # profiled cells keep the static rendering a reader sees without a kernel
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("%%everyo_profile"):
            html = [
                o.data["text/html"]
                for o in cell.outputs
                if o.output_type in ("display_data", "execute_result") and "text/html" in o.data
            ]
            assert html and 'class="everyo-static-flame"' in html[-1]
            assert "<script" not in html[-1].lower()

    saved = tmp_path / "executed.ipynb"
    nbformat.write(nb, saved)
    size = saved.stat().st_size
    state = json.dumps(nb.metadata.get("widgets", {}).get(STATE_MIME, {}))
    assert size <= MAX_EXECUTED_BYTES, f"executed {path.name}: {size:,} B (state {len(state):,} B)"
    assert "plotly.js v" not in state


@pytest.mark.slow
@needs_kernel
@pytest.mark.parametrize("path", LABS, ids=lambda p: p.stem)
def test_student_version_runs_to_the_end_reporting_what_is_not_yet_done(
    path, tmp_path, monkeypatch
):
    # EVERYO_LAB_CHECKS=report: an unmet check prints its "Not yet" line and the notebook goes
    # on, so CI runs every cell of the exercises as given, not only those before the first check
    monkeypatch.setenv("EVERYO_LAB_CHECKS", "report")
    nb, error = _execute(path, tmp_path, monkeypatch)
    assert error is None, f"{path.name} failed: {str(error)[-1500:]}"
    assert _errors(nb.cells) == []
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code)

    printed = _printed(nb.cells)
    not_yet = [line for line in printed.splitlines() if line.startswith("\u2717 Not yet (check ")]
    assert not_yet, "the exercises as given passed every check"
    assert all(f" of {path.stem}): " in line and len(line) > 60 for line in not_yet), not_yet

    # the last cell, "record your results", ran and wrote the results file
    assert "lab.record(" in code[-1].source
    record = json.loads((tmp_path / "results" / f"{path.stem}.json").read_text())
    assert record["lab"] == path.stem and record["size"] == "small"
    unjudged = [line for line in printed.splitlines() if line.startswith("? check ")]
    assert len(record["checks_not_yet"]) == len(not_yet) + len(unjudged)
    expected = len(re.findall(r"\blab\.check\(", _code(nb)))
    assert len(record["checks_passed"]) + len(not_yet) + len(unjudged) == expected


@pytest.mark.slow
@needs_kernel
def test_student_version_stops_at_its_first_check_with_a_hint(tmp_path, monkeypatch):
    # the default check mode (stop), as a student gets it: one lab is enough, the mechanism is
    # the same in all of them
    path = LABS[0]
    monkeypatch.delenv("EVERYO_LAB_CHECKS", raising=False)
    nb, error = _execute(path, tmp_path, monkeypatch)
    assert error is not None, "the exercises as given passed every check"
    assert error.ename == "LabCheckError", f"{error.ename}: {error.evalue}"
    assert error.evalue.startswith("Not yet (check 1 of ") and len(error.evalue) > 60

    ran = [c for c in nb.cells if c.cell_type == "code" and c.execution_count is not None]
    failed = ran[-1]
    first_exercise = next(i for i, c in enumerate(nb.cells) if "exercise" in _tags(c))
    first_check = next(c for c in nb.cells[first_exercise + 1 :] if "check" in _tags(c))
    assert failed is first_check, failed.source[:80]
    # everything before ran cleanly; the check shows one "Not yet" line, no traceback
    assert _errors(ran[:-1]) == []
    (out,) = [o for o in failed.outputs if o.output_type == "error"]
    assert len(out.traceback) == 1 and "Not yet" in out.traceback[0], out.traceback


# -- coverage of the user guide --------------------------------------------------------------

# The sections of the user guide ("Performance Optimization"), in its order.
GUIDE_SECTIONS = [
    "Overview",
    "Performance Engineering Architecture",
    "Performance Metrics",
    "Profiling API",
    "Profiling a Neural Network",
    "Custom Profiling Regions",
    "Chrome Trace Export",
    "CPU Execution",
    "CUDA Execution",
    "Tensor Computation Efficiency",
    "Memory Optimization",
    "DataLoader Performance",
    "Batch Size Optimization",
    "Training Throughput",
    "Inference Optimization",
    "Numerical Precision",
    "Benchmarking Methodology",
    "Complete Benchmark Example",
    "Performance Regression Testing",
    "Bottleneck Analysis",
    "Reproducibility",
    "Troubleshooting",
    "Optimization Checklist",
    "Developer References",
    "Next Steps",
]


def _readme_mapping() -> dict[str, list[str]]:
    """``{guide section: [lab numbers]}`` from the table in examples/README.md."""
    text = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    table = text.split("| guide section | labs |", 1)[1].split("\n\n", 1)[0]
    mapping = {}
    for line in table.strip().splitlines()[1:]:
        section, labs = (cell.strip() for cell in line.strip().strip("|").split("|"))
        mapping[section] = [lab.strip() for lab in labs.split(",") if lab.strip()]
    return mapping


def _intro_sections(path: Path) -> set[str]:
    intro = nbformat.read(path, as_version=4).cells[0].source
    listed = intro.split("**Guide sections:**", 1)[1].split("\n\n", 1)[0]
    return {s.strip().rstrip(".") for s in " ".join(listed.split()).split(",")}


def test_every_guide_section_has_a_lab():
    mapping = _readme_mapping()
    missing = [s for s in GUIDE_SECTIONS if not mapping.get(s)]
    assert not missing, f"guide sections with no lab in examples/README.md: {missing}"
    assert set(mapping) == set(GUIDE_SECTIONS), set(mapping) ^ set(GUIDE_SECTIONS)


def test_the_mapping_agrees_with_what_each_lab_says_it_covers():
    mapping = _readme_mapping()
    by_number = {p.stem[:2]: p for p in LABS}
    for section, numbers in mapping.items():
        for number in numbers:
            assert number in by_number, f"{section}: no lab {number}"
            assert section in _intro_sections(by_number[number]), (section, number)
    for number, path in by_number.items():
        for section in _intro_sections(path):
            assert section in GUIDE_SECTIONS, f"lab {number} names {section!r}"
            assert number in mapping[section], f"README: {section} should list lab {number}"


def test_lab_08s_checks_say_when_the_machine_was_too_busy_to_tell(capsys):
    """The gate's exit code 4 and a check that the machine's state made inconclusive get a
    hint that says so, not "add --baseline" to a student whose command was right."""
    from everyo.bench.regression import MACHINE_BUSY, RegressionCheck
    from everyo_lab.labs import Lab

    source = (EXAMPLES / "src" / "08_regressions.py").read_text()
    checks = [code for kind, code in _builder().parse(source) if kind == "check"]
    gate = next(code for code in checks if "exit_v2" in code)
    lab = Lab("08_regressions", "goal", "small", "report")
    exec(gate, {"lab": lab, "exit_v2": 4, "exit_v1": 0})
    assert "exit 4 means the machine was too busy to tell" in capsys.readouterr().out
    exec(gate, {"lab": lab, "exit_v2": 0, "exit_v1": 0})  # a wrong command: no such clause
    assert "exit 4" not in capsys.readouterr().out

    def check(verdict, note=""):
        return RegressionCheck(
            0.1, 1.1, 1.0, 1.2, 0.1, 0.95, "median", 0.01, 0.011, verdict, machine_note=note
        )

    verdicts = next(code for code in checks if "aa.verdict" in code)
    note = "the baseline was measured on a contended machine: other processes used 1.8 of 2"
    busy = check(MACHINE_BUSY, note)
    exec(verdicts, {"lab": lab, "aa": busy, "ab": busy, "threshold": 0.1})
    assert f"rerun when the machine is quieter: {note}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("lab_name", "name", "extra"),
    [
        ("01_first_profile", "speedup", {}),
        ("02_regions_and_traces", "stage_speedup", {}),
        ("03_vectorisation", "speedup", {"rows": 1000}),
        ("03_vectorisation", "pair_speedup", {"points": 200}),
        ("07_cpu_vs_cuda", "transfer_speedup", {}),
    ],
)
def test_a_speed_up_check_says_when_the_machine_made_it_inconclusive(lab_name, name, extra, capsys):
    """Met or not, a check on an interleaved speed-up that the machine's state made
    inconclusive says so: a pass does not read "12x faster" alone, a miss not only "reach 3x"."""
    from everyo.bench.regression import MACHINE_BUSY, Comparison
    from everyo_lab.labs import Lab

    source = (EXAMPLES / "src" / f"{lab_name}.py").read_text()
    cell = _check_call(source, f"{name}.speedup >=")
    note = "the candidate was measured on a contended machine: other processes used 1.8 of 2"
    lab = Lab(lab_name, "goal", "small", "report")
    for speedup in (1.5, 50.0):  # a miss and a pass
        result = Comparison(
            speedup, speedup, speedup, 0.95, "median", 1.0, 1 / speedup, MACHINE_BUSY, note
        )
        exec(cell, {"lab": lab, name: result, **extra})
        assert note in capsys.readouterr().out, speedup


def _check_call(source: str, marker: str) -> str:
    """The one ``lab.check(...)`` call of a lab source whose text holds ``marker``."""
    for start in (m.start() for m in re.finditer(r"^lab\.check\(", source, re.M)):
        depth, end = 0, start
        for end in range(start, len(source)):
            depth += {"(": 1, ")": -1}.get(source[end], 0)
            if depth == 0 and source[end] == ")":
                break
        if marker in source[start : end + 1]:
            return source[start : end + 1]
    raise AssertionError(f"no lab.check call with {marker!r}")


def _lab_check_cells(lab_name: str) -> list[str]:
    source = (EXAMPLES / "src" / f"{lab_name}.py").read_text()
    return [code for kind, code in _builder().parse(source) if kind == "check"]


def test_lab_05_says_inconclusive_when_no_trusted_point_fits_the_budget(capsys):
    """A busy machine can leave no trusted row within the latency budget: the check says the
    measurement was inconclusive and to rerun, with no traceback (it raised ValueError from
    max() of nothing), and the solution's choice does not raise either."""
    from everyo.bench import SweepResult
    from everyo.bench.sweep_point import row_from_times
    from everyo_lab.labs import Lab

    rows = [
        replace(row_from_times(bs, [1e-4 * bs] * 5), verdict="contended") for bs in (16, 64, 256)
    ]
    result = SweepResult(rows=rows)
    source = (EXAMPLES / "src" / "05_batch_size.py").read_text()
    solution = next(
        code
        for kind, code in _builder().parse(source)
        if kind == "solution" and "in_budget" in code
    )
    scope = {"result": result, "budget_ms": 1.5 * result[64].p95_ms}
    exec(solution, scope)
    check = next(code for code in _lab_check_cells("05_batch_size") if "budget_ms" in code)
    lab = Lab("05_batch_size", "goal", "small", "stop")  # stop mode: a miss would raise
    exec(check, {"lab": lab, **scope})
    out = capsys.readouterr().out
    assert "inconclusive: no trusted point" in out and "rerun the sweep" in out
    assert "64 (contended)" in out
    assert lab.not_yet and not lab.passed


def test_lab_05s_bytes_per_sample_message_adds_up(capsys):
    """The passing message lists the activations per sample and their sum correctly, and says
    which are held at the peak it measured (it summed 32 + 256 + 256 + 10 to 544)."""
    from everyo_lab.labs import Lab

    check = next(code for code in _lab_check_cells("05_batch_size") if "bytes_per_sample" in code)
    for values in (544, 554):
        result = {n: SimpleNamespace(peak_memory=1000 + n * values * 4) for n in (256, 1024)}
        lab = Lab("05_batch_size", "goal", "small", "stop")
        exec(check, {"lab": lab, "result": result, "bytes_per_sample": values * 4})
        line = capsys.readouterr().out
        assert f"{values} float32 values held at the peak" in line
        parts = [int(n) for n in re.findall(r"(?:input|hidden|ReLU's|output) (\d+)", line)]
        total = int(re.search(r"(\d+) in all", line).group(1))
        assert sum(parts) == total == 554, line


@pytest.mark.parametrize("verdict", ["slower", "busy"])
def test_lab_06s_precision_check_says_slower_and_rerun_when_inconclusive(verdict, capsys):
    """float16 on a CPU at 0.012x float32's speed: the check says "83.3x slower", as the line
    printed above it does, not "0.01x speed"; and when the machine made the comparison
    inconclusive it asks for a rerun (it passed on 'Speedup: 0.012x ... inconclusive')."""
    from everyo.bench.regression import MACHINE_BUSY, Comparison
    from everyo_lab.labs import Lab

    source = (EXAMPLES / "src" / "06_training_throughput.py").read_text()
    words = re.search(r"^ratio = precision_speed\.speedup\n.*?\n\)\n", source, re.S | re.M)
    note = "the machine was contended: other processes used 1.9 of 2 cores"
    busy = verdict == "busy"
    result = Comparison(
        0.012,
        0.011,
        0.013,
        0.95,
        "median",
        0.1,
        0.1 / 0.012,
        MACHINE_BUSY if busy else "slower",
        note if busy else "",
    )
    scope = {"precision_speed": result, "acc16": 0.9, "acc32": 0.91, "use_float16": False}
    exec(words.group(0), scope)
    check = next(code for code in _lab_check_cells("06_training_throughput") if "float16" in code)
    exec(check, {"lab": Lab("06_training_throughput", "goal", "small", "stop"), **scope})
    out = capsys.readouterr().out
    assert "0.012x float32's speed (83.3x slower)" in out and "0.01x speed" not in out
    assert ("rerun" in out) == busy, out


def test_lab_01s_speed_up_check_quotes_the_figure_printed_above_it(capsys):
    """The check said 61.9x under 'Speedup: 61.912x' and beside a 147x from two benchmarks run
    apart: it quotes the interleaved figure as printed, and names it."""
    from everyo.bench.regression import Comparison
    from everyo_lab.labs import Lab

    source = (EXAMPLES / "src" / "01_first_profile.py").read_text()
    cell = _check_call(source, "speedup.speedup >=")
    result = Comparison(61.912, 58.1, 64.0, 0.95, "median", 16.3e-3, 16.3e-3 / 61.912, "faster")
    printed = re.search(r"Speedup: ([\d.]+)x", str(result)).group(1)
    exec(cell, {"lab": Lab("01_first_profile", "goal", "small", "stop"), "speedup": result})
    out = capsys.readouterr().out
    assert f"{printed}x faster (interleaved()'s speed-up" in out, out
    assert 'print("interleaved(): the two models in turns' in source  # named where printed
    assert "benchmark() medians, measured one after the other" in source


def test_lab_04s_overlap_check_quotes_the_batch_times_printed_above_it(capsys):
    """A result printed 'Average batch time: 15.5948 ms (data loading ...)' without the data
    in it, while check 6 said 'a batch takes 15.8 ms': the result prints the time per batch
    with the data wait inside it, and the check quotes those very figures."""
    import numpy as np

    from everyo.bench.throughput import TrainingThroughput
    from everyo.machine_state import worst
    from everyo_lab.labs import Lab

    def result(data_ms, step_ms):
        steps = np.full(6, step_ms / 1e3)
        return TrainingThroughput(6, 6 * 256, steps, np.full(6, data_ms / 1e3))

    serial, overlapped = result(15.3, 15.6), result(0.2, 15.6)
    check = next(c for c in _lab_check_cells("04_data_pipeline") if "overlapped_loader" in c)
    scope = {
        "serial": serial,
        "overlapped": overlapped,
        "overlap_speedup": overlapped.samples_per_s / serial.samples_per_s,
        "same_batches": lambda *a, **k: True,
        "slow_loader": None,
        "overlapped_loader": None,
        "worst": worst,
    }
    exec(check, {"lab": Lab("04_data_pipeline", "goal", "small", "stop"), **scope})
    out = capsys.readouterr().out
    for shown in (serial, overlapped):
        figure = re.search(r"Average time per batch: ([\d.]+) ms \(waiting", str(shown)).group(1)
        assert f"{figure} ms" in out, (figure, out)


def test_lab_05s_choice_asks_for_a_rerun_when_untrusted_points_might_beat_it(capsys):
    """A choice among the trusted rows that an unreliable, faster row might have beaten passes
    with the rerun clause: the recommended batch flipped between reruns under a CPU burner."""
    from everyo.bench import SweepResult
    from everyo.bench.sweep_point import row_from_times
    from everyo_lab.labs import Lab

    rows = [row_from_times(bs, [1e-5 * bs**0.5] * 5) for bs in (16, 64, 256)]
    rows[-1] = replace(rows[-1], reliable=False)  # the fastest, but its rounds disagreed
    result = SweepResult(rows=rows)
    scope = {"result": result, "budget_ms": 1.0, "chosen_batch": 64}
    check = next(code for code in _lab_check_cells("05_batch_size") if "budget_ms" in code)
    exec(check, {"lab": Lab("05_batch_size", "goal", "small", "stop"), **scope})
    out = capsys.readouterr().out
    assert "passed: batch 64" in out and "provisional: 256 (unreliable)" in out
    assert "rerun to confirm" in out
