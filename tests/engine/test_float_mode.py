"""Subnormal floats flushed to zero in backward passes and optimizer steps
(``everyo.core.float_mode``): what flushing removes, that it changes nothing where the values
are normal, and that the caller's own arithmetic keeps its IEEE mode."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import everyo as eo
from everyo.core import float_mode
from everyo.environment_record import format_environment
from everyo.errors import EveryOAutogradError, EveryOConfigError

TINY32 = np.finfo(np.float32).tiny
needs_flush = pytest.mark.skipif(
    not float_mode.SUPPORTED,
    reason="everyo/core/_cfloat.c is not built (or EVERYO_PURE_PYTHON=1), or the CPU's "
    "flush-to-zero mode cannot be set here",
)


@pytest.fixture
def ieee():
    """Subnormals computed as IEEE arithmetic does, for the length of a test."""
    eo.set_flush_denormal(False)
    yield
    eo.set_flush_denormal(True)


def flushed_and_ieee(fn):
    """``fn()`` as everyo runs it (flushed where supported), then with IEEE subnormals."""
    flushed = fn()
    eo.set_flush_denormal(False)
    try:
        return flushed, fn()
    finally:
        eo.set_flush_denormal(True)


def subnormals(a) -> int:
    a = np.asarray(a)
    return int(((np.abs(a) < np.finfo(a.dtype).tiny) & (a != 0)).sum())


def this_thread_flushes() -> bool:
    """Whether arithmetic on this thread turns a subnormal float32 into zero."""
    return bool((np.array([1e-40], np.float32) * np.float32(1.0))[0] == 0)


# ---- backward -------------------------------------------------------------------------------
def _fitted_classifier_grads():
    """The gradients of a linear classifier whose wrong class trails by about 95 logits: the
    softmax's probability of it, exp(-95) = 5.5e-42, is a float32 subnormal."""
    layer = eo.nn.Linear(3, 2, seed=0)
    layer.weight.data[...] = [[1.0, 0.0, 0.0], [-94.0, 0.0, 0.0]]
    layer.bias.data[...] = 0.0
    x = eo.tensor([[1.0, 0.5, -2.0]], dtype="float32")
    loss = eo.nn.CrossEntropyLoss()(layer(x), eo.tensor([0]))
    loss.backward()
    return layer.weight.grad.numpy(), layer.bias.grad.numpy()


@needs_flush
def test_backward_flushes_the_softmax_tail():
    for g in _fitted_classifier_grads():
        assert subnormals(g) == 0
        assert not g.any()  # the true gradient is 5.5e-42 times x: all of it below TINY32


def test_backward_keeps_ieee_subnormals_when_turned_off(ieee):
    w_grad, b_grad = _fitted_classifier_grads()
    assert subnormals(w_grad) == 3 and subnormals(b_grad) == 1
    assert b_grad[1] == pytest.approx(np.exp(-95.0), rel=1e-3)


def _mlp_grads(seed=0):
    rng = np.random.default_rng(seed)
    model = eo.nn.Sequential(eo.nn.Linear(8, 16, seed=1), eo.nn.ReLU(), eo.nn.Linear(16, 4, seed=2))
    x = eo.tensor(rng.standard_normal((5, 8)).astype(np.float32))
    loss = eo.nn.CrossEntropyLoss()(model(x), eo.tensor(rng.integers(0, 4, 5)))
    loss.backward()
    return [p.grad.numpy() for p in model.parameters()]


def test_backward_with_normal_values_equals_ieee_bit_for_bit():
    flushed, reference = flushed_and_ieee(_mlp_grads)
    assert all(subnormals(g) == 0 and np.abs(g).max() > 1e-6 for g in reference)
    for got, want in zip(flushed, reference):
        np.testing.assert_array_equal(got, want)


@needs_flush
def test_backward_on_another_thread_flushes_there_too():
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("grads", _fitted_classifier_grads()))
    worker.start()
    worker.join()
    assert all(not g.any() for g in out["grads"])


@needs_flush
def test_the_callers_mode_is_back_after_backward_even_when_it_raises():
    _fitted_classifier_grads()
    assert not this_thread_flushes()
    x = eo.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(EveryOAutogradError):
        y.backward()  # the graph was freed: raised inside the flushing scope
    assert not this_thread_flushes()


# ---- optimizer state ------------------------------------------------------------------------
def _two_steps(opt_cls, grad, **kw):
    """Parameters and state after two steps with ``grad`` (SGD's first step only copies the
    gradient into its momentum buffer; the second updates it)."""
    w = eo.nn.Parameter(eo.tensor(np.linspace(-1.0, 1.0, grad.size), dtype="float32"))
    opt = opt_cls([w], **kw)
    for _ in range(2):
        w.grad = eo.tensor(grad)
        opt.step()
    return w.numpy(), {k: v for k, v in opt.state[id(w)].items() if isinstance(v, np.ndarray)}


# normal gradients beside ones whose moments are subnormal: 1e-39 is one itself (so is
# 0.1 * 1e-39 in exp_avg), and 3e-20 squared is 9e-40 (in exp_avg_sq)
GRAD = np.array([0.5, -2.0, 1e-39, -1e-39, 3e-20, -3e-20, 0.0, 1e-3], np.float32)
OPTIMIZERS = [
    (eo.optim.Adam, {}),
    (eo.optim.Adam, {"amsgrad": True}),
    (eo.optim.AdamW, {}),
    (eo.optim.SGD, {"momentum": 0.9}),
]


@needs_flush
@pytest.mark.parametrize(("opt_cls", "kw"), OPTIMIZERS)
def test_optimizer_state_holds_no_subnormals_after_an_update(opt_cls, kw):
    _, state = _two_steps(opt_cls, GRAD, **kw)
    assert state and all(subnormals(v) == 0 for v in state.values())


@pytest.mark.parametrize(("opt_cls", "kw"), OPTIMIZERS)
def test_optimizer_step_equals_ieee_where_values_are_normal(opt_cls, kw):
    (params, state), (ref_params, ref_state) = flushed_and_ieee(
        lambda: _two_steps(opt_cls, GRAD, **kw)
    )
    # a subnormal moment moves a parameter near 1 by far less than half its spacing
    np.testing.assert_array_equal(params, ref_params)
    for key, ref in ref_state.items():
        normal = np.abs(ref) >= TINY32
        np.testing.assert_array_equal(state[key][normal], ref[normal])
        assert np.abs(state[key][~normal] - ref[~normal]).max(initial=0.0) < TINY32


def _adam_eps0_step_is_finite(grad: float) -> bool:
    w = eo.nn.Parameter(eo.ones(1))
    w.grad = eo.tensor(np.float32([grad]))
    with np.errstate(divide="ignore", invalid="ignore"):
        eo.optim.Adam([w], eps=0.0).step()
    return bool(np.isfinite(w.numpy()).all())


@needs_flush
def test_adam_without_eps_divides_by_zero_below_the_gradients_the_guide_names():
    # v = (1 - b2) * g * g: flushed when below TINY32, i.e. for |g| < about 3e-18; IEEE keeps
    # it down to half the smallest subnormal, |g| < about 8e-22 (docs/engine.md)
    assert _adam_eps0_step_is_finite(1e-17)
    assert not _adam_eps0_step_is_finite(3e-18)
    eo.set_flush_denormal(False)
    try:
        assert _adam_eps0_step_is_finite(3e-18) and _adam_eps0_step_is_finite(1e-21)
        assert not _adam_eps0_step_is_finite(7e-22)
    finally:
        eo.set_flush_denormal(True)


def _adam_with_subnormal_moments():
    """Adam whose moments hold a few subnormals, stepped 20 times with zero gradients."""
    w = eo.nn.Parameter(eo.ones(4))
    opt = eo.optim.Adam([w])
    w.grad = eo.ones(4)
    opt.step()
    state = opt.state_dict()
    tiny_steps = np.array([4, 1, 0, 400], np.float32) * np.float32(1.4e-45)
    state["state"][0]["exp_avg"] = tiny_steps
    state["state"][0]["exp_avg_sq"] = tiny_steps
    opt.load_state_dict(state)
    for _ in range(20):
        w.grad = eo.zeros(4)
        opt.step()
    st = opt.state[id(w)]
    return st["exp_avg"], st["exp_avg_sq"]


@needs_flush
def test_adam_moments_below_tiny_become_zero():
    m, v = _adam_with_subnormal_moments()
    assert not m.any() and not v.any()


def test_adam_moments_below_tiny_never_decay_under_ieee(ieee):
    # why flushing matters beyond one step: 0.9 * 4 steps of the smallest subnormal rounds
    # back to 4, so these moments stay subnormal (and slow) for the rest of the training
    m, v = _adam_with_subnormal_moments()
    assert subnormals(m) == 3 and subnormals(v) == 3


def test_float16_subnormals_survive_a_step():
    # float16's subnormals (below 6.1e-5) are normal float32s while NumPy computes them: the
    # flush never touches what mixed precision's small gradients become
    w = eo.nn.Parameter(eo.zeros(3, dtype="float16"))
    w.grad = eo.tensor(np.full(3, 1e-6, np.float16))
    eo.optim.SGD([w], lr=1.0).step()
    assert subnormals(w.numpy()) == 3
    np.testing.assert_array_equal(w.numpy(), -np.full(3, 1e-6, np.float16))


@needs_flush
def test_the_callers_mode_is_back_after_a_step_even_when_it_raises():
    class Failing(eo.optim.Optimizer):
        def _step(self):
            raise RuntimeError("broken update")

    opt = Failing([eo.nn.Parameter(eo.ones(1))], 0.1)
    with pytest.raises(RuntimeError, match="broken update"):
        opt.step()
    assert not this_thread_flushes()


@needs_flush
def test_scopes_nest_and_a_close_without_an_open_scope_changes_nothing():
    # the engine calls begin() inside its try and end() in its finally, so an interrupt before
    # begin() ran closes a scope that was never opened: that must not touch the thread's mode
    float_mode.end()
    assert not this_thread_flushes()
    float_mode.begin()
    float_mode.begin()  # a backward pass inside an optimizer step, say
    float_mode.end()
    assert this_thread_flushes()  # the outer scope is still open
    float_mode.end()
    assert not this_thread_flushes()


@needs_flush
def test_a_scope_opened_before_the_mode_is_switched_off_still_closes():
    float_mode.begin()
    eo.set_flush_denormal(False)
    try:
        float_mode.end()
        assert not this_thread_flushes()
    finally:
        eo.set_flush_denormal(True)


# ---- the switch -----------------------------------------------------------------------------
def test_set_flush_denormal_says_whether_it_is_supported_and_checks_its_argument():
    assert eo.set_flush_denormal(True) is float_mode.SUPPORTED
    with pytest.raises(EveryOConfigError, match="True or False"):
        eo.set_flush_denormal(1)


def test_the_environment_record_says_whether_steps_flush(ieee):
    # a step's time depends on it once a model fits: benchmark records keep it
    record = eo.environment()["everyo"]
    assert record["flush_denormal"] is False
    assert "flush_denormal: off" in format_environment(eo.environment())
    eo.set_flush_denormal(True)
    assert eo.environment()["everyo"]["flush_denormal"] is float_mode.SUPPORTED


def test_ci_builds_and_uses_the_compiled_float_mode():
    """CI sets EVERYO_REQUIRE_COMPILED=1: there ``everyo/core/_cfloat.c`` must be built and in
    use (else the tests marked ``needs_flush`` above would skip unseen)."""
    import os

    if not os.environ.get("EVERYO_REQUIRE_COMPILED"):
        pytest.skip("EVERYO_REQUIRE_COMPILED is not set (only CI requires the extension)")
    assert float_mode.SUPPORTED


@needs_flush
def test_a_batch_sum_of_flushed_shares_is_zero_where_ieee_gives_a_normal_float():
    # the engine guide's "or add up": each example's share p / 64 is subnormal, their sum is
    # not; flushed, the sum is of zeros
    def grads():
        layer = eo.nn.Linear(1, 2, seed=0)
        layer.weight.data[...] = [[0.0], [-85.0 / 255]]  # the wrong class trails by 85
        layer.bias.data[...] = 0.0
        x = eo.tensor(np.full((64, 1), 255.0, np.float32))
        eo.nn.CrossEntropyLoss()(layer(x), eo.tensor(np.zeros(64, np.int64))).backward()
        return layer.weight.grad.numpy()[1, 0], layer.bias.grad.numpy()[1]

    flushed, reference = flushed_and_ieee(grads)
    assert flushed == (0.0, 0.0)
    assert TINY32 < reference[1] < 64 * TINY32 < reference[0]  # exp(-85) = 1.2e-37


# ---- what the forward pass saved ------------------------------------------------------------
def _entropy_grads(through_log_softmax: bool):
    """The gradient of a softmax's entropy whose middle probability, exp(-95), is subnormal."""
    logits = eo.tensor(np.array([[10.0, -85.0, 0.0]], np.float32), requires_grad=True)
    if through_log_softmax:
        lp = eo.log_softmax(logits, axis=-1)
        entropy = -(eo.exp(lp) * lp).sum()
    else:
        p = eo.softmax(logits, axis=-1)
        entropy = -(p * eo.log(p)).sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        entropy.backward()
    return logits.grad.numpy()


@needs_flush
def test_a_subnormal_the_forward_pass_saved_is_read_as_it_is_in_backward():
    # log's gradient g / p with p = exp(-95) saved by the (IEEE) forward pass: flushing inputs
    # as well (DAZ) made it 0 / 0, NaN everywhere; results-only flushing keeps IEEE's gradient
    flushed, reference = flushed_and_ieee(lambda: _entropy_grads(False))
    assert np.isfinite(flushed).all() and np.isfinite(reference).all()
    normal = np.abs(reference) >= TINY32
    np.testing.assert_allclose(flushed[normal], reference[normal], rtol=1e-6)
    assert (flushed[~normal] == 0).all()  # (the subnormal gradient itself is flushed)


def test_the_guides_log_softmax_entropy_is_finite_and_matches_ieee_where_normal():
    flushed, reference = flushed_and_ieee(lambda: _entropy_grads(True))
    assert np.isfinite(flushed).all()
    normal = np.abs(reference) >= TINY32
    np.testing.assert_allclose(flushed[normal], reference[normal], rtol=1e-6)


@needs_flush
def test_a_written_out_binary_cross_entropy_of_a_sure_negative_stays_finite():
    # sigmoid(-90) = 8.2e-40 is subnormal; with inputs flushed too, log(p)'s gradient was 0 / 0
    def grads(loss_fn):
        z = eo.tensor(np.float32([[-90.0], [3.0]]), requires_grad=True)
        y = eo.tensor(np.float32([[0.0], [1.0]]))
        loss_fn(eo.sigmoid(z), y).backward()
        return z.grad.numpy().ravel()

    written_out = grads(lambda p, y: -(y * eo.log(p) + (1 - y) * eo.log(1 - p)).mean())
    assert np.isfinite(written_out).all()
    assert np.isfinite(grads(eo.nn.BCELoss())).all()


@needs_flush
def test_a_thread_started_inside_a_scope_computes_subnormals_as_ieee():
    """Issue 44: a thread started inside ``optimizer.step()`` or a backward function (the
    scope both open with ``float_mode.begin()``) was born with flush-to-zero and kept it for
    life: its own NumPy code turned 1e-39 into 0. It now runs in its creator's mode outside
    the scope."""
    results = []

    def own_work():  # the thread's own code, after its creator's scope ended
        results.append(float(np.float32(1e-30) * np.float32(1e-9)))

    float_mode.begin()
    try:
        thread = threading.Thread(target=own_work)
        thread.start()
        inside = float(np.float32(1e-30) * np.float32(1e-9))
    finally:
        float_mode.end()
    thread.join()
    assert inside == 0.0  # (the scope's own thread flushes)
    assert results[0] != 0.0  # (a subnormal float32, as IEEE computes it)
