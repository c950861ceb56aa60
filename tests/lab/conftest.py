"""Fixtures of the lab tests that drive a real IPython ``InteractiveShell``."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def shell():
    """An ``InteractiveShell`` with the everyo_lab extension loaded (one per test module)."""
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.extension_manager.load_extension("everyo_lab")
    return sh


@pytest.fixture
def fresh_runs():
    """The kernel's run registry empty before and after the test."""
    from everyo.profiler import runs

    runs.clear()
    yield runs
    runs.clear()
