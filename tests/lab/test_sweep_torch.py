"""``%everyo_sweep`` and ``SweepWidget`` on a PyTorch model and a batch maker: the points, the
recommendation, the machine's verdicts, and peak memory labelled as the resident-set growth it
is on a CPU, in the widget's chart, the static rendering and its text."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("IPython")
pytest.importorskip("anywidget")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from everyo_lab import SweepWidget, sweeps  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"
LABEL = "host, resident-set growth"
SETUP = """
import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(32, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.01)

def make_batch(n):
    return torch.randn(n, 32)

def train_step(x):
    opt.zero_grad()
    net(x).square().mean().backward()
    opt.step()
"""
FAST = "--warmup 1 --repeat 3"


@pytest.fixture(scope="module")
def shell():
    sh = InteractiveShell.instance()
    sh.extension_manager.load_extension("everyo_lab")
    assert sh.run_cell(SETUP).success
    return sh


def sweep(shell, line):
    with capture_output() as cap:
        result = shell.run_cell(f"%everyo_sweep {line}")
    return result, cap


def test_magic_sweeps_a_torch_model_and_labels_its_memory(shell):
    result, cap = sweep(shell, f"net make_batch --batch-sizes 1,16,256 {FAST} --label torchnet")
    assert result.success, cap.stdout
    widget = sweeps["torchnet"]
    rows = widget.result.rows
    assert [(r.batch_size, r.status) for r in rows] == [(1, "ok"), (16, "ok"), (256, "ok")]
    assert all(r.verdict in ("quiet", "busy", "contended", "unknown") for r in rows)
    assert widget.report["memory_kind"] == LABEL
    assert widget.charts["memory"]["layout"]["title"]["text"].startswith(f"peak memory ({LABEL})")
    statics = [o.data for o in cap.outputs if WIDGET not in o.data and "text/html" in o.data]
    final = statics[-1]
    assert f"peak memory ({LABEL})" in final["text/html"]
    assert f"peak memory: {LABEL}" in final["text/plain"]
    assert "is recommended" in final["text/plain"]
    rec = widget.report["recommendation"]
    if rec["recommended"] is None:  # every point re-measured and left untrusted (a busy machine)
        assert all(r.flag for r in rows) and "no point can be trusted" in rec["text"], rec
    else:
        assert rec["recommended"] in (1, 16, 256) and rec["text"].startswith("Batch size")


def test_magic_memory_limit_ends_a_torch_point_and_train_needs_a_step(shell):
    # batch 4096 needs 2 x 16 MiB of activations (Linear output, ReLU output); 64 about 0.5 MiB
    result, cap = sweep(
        shell, f"net make_batch --batch-sizes 64,4096 --memory-limit 8MiB {FAST} --label torchlim"
    )
    assert result.success, cap.stdout
    assert [r.status for r in sweeps["torchlim"].result.rows] == ["ok", "oom"]
    result, cap = sweep(shell, f"net make_batch --mode train {FAST}")
    assert "%everyo_sweep: mode='train' needs a step function" in cap.stdout
    result, cap = sweep(
        shell, f"train_step make_batch --mode train --batch-sizes 8,32 {FAST} --label torchtrain"
    )
    assert result.success, cap.stdout
    assert [r.memory_source for r in sweeps["torchtrain"].result.rows] == ["rss", "rss"]


def test_sweep_widget_runs_a_torch_model_on_the_cpu_device():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 64), torch.nn.Tanh(), torch.nn.Linear(64, 2))
    w = SweepWidget(
        model, lambda n: torch.randn(n, 8), batch_sizes=[2, 32], device="cpu", warmup=1, repeat=3
    )
    w.send = lambda *a, **k: None
    result = w.run()
    assert [r.status for r in result.rows] == ["ok", "ok"]
    assert w.status == "completed" and w.report["memory_kind"] == LABEL
    assert next(model.parameters()).device.type == "cpu" and model.training
