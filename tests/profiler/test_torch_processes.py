"""The PyTorch adapter seen from a fresh process: the CLI on a script that imports torch,
``import everyo`` without torch, everyo with torch hidden, dynamo first imported in a profile.

(Not run once per recorder like test_torch_adapter.py: each test is a subprocess.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cli_profiles_a_torch_script(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent("""
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
        model(torch.randn(2, 4)).sum().backward()
    """)
    )
    env = {**os.environ, "PYTHONPATH": ROOT}
    out = subprocess.run(
        [sys.executable, "-m", "everyo", "profile", str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "Linear.backward" in out.stdout and "Sequential" in out.stdout
    off = subprocess.run(
        [sys.executable, "-m", "everyo", "profile", "--no-torch", str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert off.returncode == 0, off.stderr
    assert "Linear" not in off.stdout


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_import_everyo_does_not_import_torch():
    out = _run("""
        import sys
        import everyo, everyo.profiler as ep
        finders = list(sys.meta_path)
        with ep.profile():
            pass
        print("torch" in sys.modules, sys.meta_path == finders)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False True"  # and the watch for torch's import is gone


def test_everyo_profiles_as_today_without_torch():
    out = _run("""
        import sys

        class HideTorch:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        sys.meta_path.insert(0, HideTorch())
        import numpy as np
        import everyo.profiler as ep
        from everyo import nn
        from everyo.core.tensor import Tensor
        model = nn.Linear(4, 2)
        with ep.profile() as p:
            model(Tensor(np.ones((1, 4), np.float32)))
        print(sorted({e.name for e in p.events}), "torch" in sys.modules)
        try:
            import everyo.profiler.torch
        except ModuleNotFoundError as e:
            print("seam:", e.name)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['Linear'] False", "seam: torch"]


def test_dynamo_first_imported_inside_a_profile_keeps_torchs_module_call():
    """dynamo reads ``nn.Module.__call__`` once, as it is imported: a first torch.compile inside
    a profile must not leave it holding ours after the profile."""
    out = _run("""
        import sys, torch
        import everyo.profiler as ep
        assert "torch._dynamo" not in sys.modules
        with ep.profile():
            torch.compile(torch.nn.Linear(2, 2), backend="eager")(torch.randn(1, 2))
        import torch._dynamo.utils as u, torch._dynamo.variables.nn_module as nm
        own = torch.nn.Module._wrapped_call_impl
        print(u.unpatched_nn_module_call is own, nm.unpatched_nn_module_call is own)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"]
