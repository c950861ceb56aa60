"""Fixtures of the profiler tests."""

from __future__ import annotations

import pytest
from profiler_fakes import FakeClock

from everyo.profiler import RunRegistry


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry() -> RunRegistry:
    """A private run registry, so tests neither fill nor read the kernel-wide one."""
    return RunRegistry()
