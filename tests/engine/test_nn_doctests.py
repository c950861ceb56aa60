"""The examples in the docstrings of core, nn, optim, data, training, serialization and
datasets run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "everyo.core.tensor", "everyo.core.device", "everyo.core.autocast", "everyo.core.grad_scaler",
    "everyo.core.float_mode",
    "everyo.core.ops.linalg", "everyo.nn.functional", "everyo.nn.module", "everyo.nn.containers",
    "everyo.nn.linear", "everyo.nn.conv", "everyo.nn.attention", "everyo.nn.loss",
    "everyo.nn.parameter", "everyo.optim.sgd", "everyo.optim.lr_scheduler", "everyo.data.dataset",
    "everyo.data.dataloader", "everyo.training.trainer", "everyo.serialization", "everyo.datasets",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
