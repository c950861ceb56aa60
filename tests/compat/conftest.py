"""Compatibility tests with reference EveryO (shared/reference/everyo-api.md): each test runs a
script as a user of the reference would write it and checks the reference's documented result."""

from __future__ import annotations

import sys
from pathlib import Path

# the finite-difference checker of the engine tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
