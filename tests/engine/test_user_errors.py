"""Errors a user can cause in the engine name what was passed and what is expected, instead of
NumPy's wording (issue 12 §3)."""

from __future__ import annotations

import pytest

import everyo as eo

NO_IDENTITY = ["max", "min", "argmax", "argmin", "logsumexp"]


@pytest.mark.parametrize("name", NO_IDENTITY)
def test_reducing_an_empty_tensor_says_so(name):
    with pytest.raises(eo.EveryOShapeError, match=rf"{name}\(\) needs at least one element") as e:
        getattr(eo.zeros(0), name)() if hasattr(eo.Tensor, name) else getattr(eo, name)(eo.zeros(0))
    message = str(e.value)
    assert "shape (0,)" in message and "numel() > 0" in message
    assert "no identity" not in message and "empty sequence" not in message
    assert isinstance(e.value, ValueError)  # as NumPy's was: `except ValueError` still works


@pytest.mark.parametrize("name", NO_IDENTITY)
def test_reducing_an_empty_axis_names_the_axis_and_other_axes_still_work(name):
    fn = getattr(eo, name)
    with pytest.raises(eo.EveryOShapeError, match=r"axis=1 of length 0 .*shape \(3, 0\)"):
        fn(eo.zeros((3, 0)), axis=1)
    assert fn(eo.zeros((0, 3)), axis=1).shape == (0,)  # nothing to reduce per row: no rows
    assert fn(eo.ones((2, 3)), axis=1).shape == (2,)


def test_sum_and_mean_of_empty_keep_their_values():
    assert float(eo.zeros(0).sum().item()) == 0.0


@pytest.mark.parametrize(
    "state, said, hint",
    [
        ([1, 2, 3], "got list [1, 2, 3]", "model.state_dict()"),
        ("model.eo", "got str 'model.eo'", "eo.load('model.eo')"),
        (None, "got NoneType None", "model.state_dict()"),
    ],
)
def test_load_state_dict_of_a_non_mapping_names_it(state, said, hint):
    model = eo.Sequential(eo.Linear(2, 2, seed=0))
    with pytest.raises(TypeError, match="expects a dict of parameter and buffer names") as e:
        model.load_state_dict(state)
    assert said in str(e.value) and hint in str(e.value)
    assert "unexpected keys" not in str(e.value)


def test_load_state_dict_of_a_module_says_to_pass_its_state():
    model, other = eo.Linear(2, 2, seed=0), eo.Linear(2, 2, seed=1)
    with pytest.raises(TypeError, match=r"got Linear .*other.state_dict\(\)"):
        model.load_state_dict(other)
    model.load_state_dict(other.state_dict())  # what the message suggests works
    assert bool((model.weight == other.weight).all())


def test_optimizer_load_state_dict_names_what_was_passed():
    opt = eo.optim.SGD(eo.Linear(2, 2).parameters(), lr=0.1)
    with pytest.raises(eo.EveryOSerializationError, match="got list, expected the dict of"):
        opt.load_state_dict([1, 2, 3])
