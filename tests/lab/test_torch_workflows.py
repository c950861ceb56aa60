"""Everything else on a PyTorch model (issue 42 item 4), through a real IPython shell:
``%%everyo_profile`` and ``--compare`` on a torch training loop, the run comparison, the Chrome
trace of a magic's run, loading it back, and the regression gate on a torch workload."""

from __future__ import annotations

import json
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("IPython")
pytest.importorskip("anywidget")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from everyo.bench import benchmark, check_regression  # noqa: E402
from everyo.profiler import runs  # noqa: E402
from everyo.profiler.analysis import run_analysis as analysis  # noqa: E402
from everyo.profiler.export.chrome import export_chrome_trace  # noqa: E402
from everyo_lab.views.compare.compare_view import build_comparison  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"
SETUP = """
import torch
from torch import nn

torch.manual_seed(0)

def make(hidden):
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, hidden), nn.ReLU(), nn.Linear(hidden, 3))

data = [(torch.randn(32, 16), torch.randint(0, 3, (32,))) for _ in range(6)]
loader = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.randn(96, 16), torch.randint(0, 3, (96,))),
    batch_size=32,
)

def train(model, loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
"""


@pytest.fixture(scope="module")
def shell():
    sh = InteractiveShell.instance()
    sh.extension_manager.load_extension("everyo_lab")
    assert sh.run_cell(SETUP).success
    return sh


@pytest.fixture(autouse=True)
def _fresh_runs():
    runs.clear()
    yield
    runs.clear()


def run_magic(shell, line, body):
    with capture_output() as cap:
        result = shell.run_cell(f"%%everyo_profile {line}\n{body}")
    return result, cap


def names_of(run) -> set[str]:
    return {row["name"] for row in analysis.summarize(run)}


def test_magic_profiles_a_torch_loop_unchanged(shell):
    result, cap = run_magic(shell, "--label tw-small", "train(make(32), loader)")
    assert result.success, cap.stdout
    bundle = [o.data for o in cap.outputs]
    assert any(WIDGET in d for d in bundle)
    static = [d for d in bundle if WIDGET not in d and "text/html" in d][-1]
    assert 'class="everyo-static-flame"' in static["text/html"]
    assert "everyo profile 'tw-small'" in static["text/plain"]
    run = runs["tw-small"]
    rows = {(r["kind"], r["name"]) for r in analysis.summarize(run)}
    # the model's layers by path, their backward, the optimizer's steps and the batch waits
    assert ("module", "Sequential") in rows and ("module", "Linear") in rows
    assert any(kind == "backward" and "Linear" in name for kind, name in rows)
    assert ("optimizer", "SGD.step") in rows
    assert any(kind == "data" for kind, _ in rows)
    starts, _, source = analysis.step_bounds(run)
    assert len(starts) == 3 and source == "optimizer"  # one step per batch


def test_compare_on_torch_runs_pairs_the_layers_and_the_steps(shell):
    assert run_magic(shell, "--no-live --label tw-a", "train(make(32), loader)")[0].success
    result, cap = run_magic(
        shell, "--no-live --label tw-b --compare tw-a", "train(make(512), loader)"
    )
    assert result.success, cap.stdout
    final = [o.data for o in cap.outputs if WIDGET not in o.data and "text/html" in o.data][-1]
    assert "everyo comparison" in final["text/html"] and "A tw-a" in final["text/html"]
    view = build_comparison(runs["tw-a"], runs["tw-b"])
    compared = {row["name"] for row in view.rows}
    assert {"Linear", "Sequential", "SGD.step"} <= compared
    assert any("backward" in name for name in compared)
    assert view.steps is not None  # both runs have three optimizer steps to compare
    assert names_of(runs["tw-a"]) == names_of(runs["tw-b"])


def test_a_torch_runs_chrome_trace_loads_back_with_its_layers(shell, tmp_path):
    from everyo.profiler import load

    assert run_magic(shell, "--no-live --label tw-trace", "train(make(32), loader)")[0].success
    run = runs["tw-trace"]
    path = export_chrome_trace(run, tmp_path / "torch.json")  # (conftest checks the nesting)
    events = json.loads(path.read_text())["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    assert {"Linear", "SGD.step"} <= {e["name"].split(" [")[0] for e in spans}
    loaded = load(path)
    assert names_of(loaded) == names_of(run)


def test_regression_gate_on_a_torch_workload(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU())
    x = torch.randn(16, 64)

    def v1():
        with torch.no_grad():
            return model(x)

    def v2():  # the same, plus a planted 5-ms wait
        time.sleep(0.005)
        return v1()

    baseline = benchmark(v1, warmup=2, repeat=20, name="v1")
    baseline.to_json(tmp_path / "baseline.json")
    check = check_regression(benchmark(v2, warmup=2, repeat=20), tmp_path / "baseline.json")
    assert not check.passed and check.verdict == "regression", str(check)
