"""The PyTorch adapter (everyo.profiler.torch): events, vocabulary, install and restore.

Real torch on the CPU, tiny models. Skipped where torch is not installed; the torch-absent
behaviour is checked in subprocesses (test_torch_processes.py).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch_checks import (  # noqa: E402
    backward_groups,
    check_module_tree,
    module_events,
    parameterised_paths,
)

import everyo.profiler as ep  # noqa: E402
from everyo.profiler.recording import keymaps  # noqa: E402

pytestmark = pytest.mark.usefixtures("recorder_impl")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.tanh(self.encoder(x)))


def _state():
    """Everything the adapter patches, as it is now."""
    import torch.autograd.profiler as ap
    import torch.nn.functional as F
    from torch.optim.lr_scheduler import LRScheduler

    rf = ap.record_function
    return (
        vars(nn.Module)["__call__"],
        torch.autograd.backward,
        torch.autograd.grad,
        vars(rf)["__enter__"],
        vars(rf)["__exit__"],
        vars(LRScheduler)["step"],
        F.linear,
        torch.matmul,
        dict(keymaps.LABELS),
    )


def _train(model, steps=2, opt=None):
    opt = opt or torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        model(torch.randn(3, 4)).pow(2).mean().backward()
        opt.step()
    return opt


def test_module_tree_matches_named_modules(registry):
    model = Net()
    with ep.profile(registry=registry) as p:
        _train(model)
    events = p.events
    assert check_module_tree(events, model) == {
        "",
        "encoder",
        "encoder.0",
        "encoder.1",
        "encoder.2",
        "head",
    }
    assert sum(e.path == "encoder.0" for e in module_events(events)) == 2
    linear = next(e for e in events if e.path == "encoder.0")
    assert linear.shapes == "[(3, 4)] -> (3, 8)"


@pytest.mark.parametrize("hook", ["compiled", "python"])
def test_backward_event_per_parameterised_module(registry, monkeypatch, hook):
    from everyo.profiler.torch import backward

    if hook == "python":  # the pass and the hook without the compiled extension
        monkeypatch.setattr(backward, "_c", None)
    elif backward._c is None:
        pytest.skip("the compiled extension was not built")
    model = Net()
    with ep.profile(registry=registry) as p:
        _train(model, steps=1)
    groups = backward_groups(p.events)
    assert (
        {g.path for g in groups} == parameterised_paths(model) == {"encoder.0", "encoder.2", "head"}
    )
    assert {g.name for g in groups} == {"Linear.backward"}  # the engine's own labels
    # autograd runs them in reverse: head's gradient first
    assert [g.path for g in sorted(groups, key=lambda g: g.start_ns)] == [
        "head",
        "encoder.2",
        "encoder.0",
    ]
    passes = [e for e in p.events if (e.kind, e.name) == ("backward", "backward")]
    assert len(passes) == 1
    # the groups tile the pass from its start: each ends where its module's gradient is in
    (whole,) = passes
    ordered = sorted(groups, key=lambda g: g.start_ns)
    assert whole.start_ns <= ordered[0].start_ns
    for a, b in zip(ordered, ordered[1:]):
        assert a.start_ns + a.duration_ns == b.start_ns
    assert ordered[-1].start_ns + ordered[-1].duration_ns <= whole.start_ns + whole.duration_ns
    assert {g.depth for g in groups} == {whole.depth + 1}


def test_autograd_grad_is_a_backward_pass(registry):
    """``torch.autograd.grad`` (a gradient penalty) is a backward pass of its own, under the
    module that called it; it fills no ``.grad``, so it has no module groups."""
    model = Net()

    class Penalised(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = model

        def forward(self, x):
            x.requires_grad_(True)
            out = self.net(x).sum()
            (g,) = torch.autograd.grad(out, x, create_graph=True)
            return out + g.pow(2).sum()

    with ep.profile(registry=registry) as p:
        Penalised()(torch.randn(3, 4)).backward()
    passes = [e for e in p.events if (e.kind, e.name) == ("backward", "backward")]
    assert len(passes) == 2
    by_row = {e.row: e for e in p.events}
    inner = min(passes, key=lambda e: e.start_ns)
    assert by_row[inner.parent].name == "Penalised"  # the grad pass, inside the forward
    assert not [e for e in p.events if e.parent == inner.row]
    groups = {g.path for g in backward_groups(p.events)}
    assert groups == {"net.encoder.0", "net.encoder.2", "net.head"}  # put back


def test_optimizer_steps_zero_grad_and_schedulers(registry):
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)
    with ep.profile(registry=registry) as p:
        for _ in range(3):
            _train(model, steps=1, opt=opt)
            sched.step()
        plateau.step(1.0)
    kinds = [(e.kind, e.name) for e in p.events if e.kind in ("optimizer", "train")]
    assert kinds.count(("optimizer", "Adam.step")) == 3
    assert kinds.count(("train", "Adam.zero_grad")) == 3
    assert kinds.count(("train", "StepLR.step")) == 3
    assert kinds.count(("train", "ReduceLROnPlateau.step")) == 1
    from everyo.profiler.analysis.run_analysis import step_bounds

    starts, ends, source = step_bounds(p.run)
    assert source == "optimizer" and len(ends) == 3  # optimizer steps end the training steps


def test_exception_inside_optimizer_step_leaves_no_region_open(registry):
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def boom(optimizer, args, kwargs):
        raise ValueError("in step")

    handle = opt.register_step_pre_hook(boom)
    with ep.profile(registry=registry) as p:
        model(torch.randn(3, 4)).sum().backward()
        with pytest.raises(ValueError):
            opt.step()
        handle.remove()
        with ep.record_function("after"):
            model(torch.randn(3, 4))
    after = next(e for e in p.events if e.name == "after")
    assert after.depth == 0 and after.parent == -1
    step = next(e for e in p.events if e.name == "SGD.step")
    assert step.depth == 0


def test_record_function_blocks_become_regions(registry):
    from torch.profiler import record_function as torch_rf  # imported before the profile

    with ep.profile(registry=registry) as p:
        with torch_rf("load"):
            with torch.autograd.profiler.record_function("inner"):
                Net()(torch.randn(1, 4))
        with ep.record_function("ours", stage=1):
            pass
    by_name = {e.name: e for e in p.events}
    assert by_name["load"].kind == by_name["inner"].kind == "user"
    assert by_name["inner"].parent == by_name["load"].row
    assert by_name["Net"].parent == by_name["inner"].row
    assert by_name["ours"].metadata == {"stage": 1}


def test_record_function_still_feeds_torch_profiler(registry):
    with ep.profile(registry=registry) as p:
        with torch.profiler.profile() as tp:
            with torch.profiler.record_function("both"):
                torch.ones(2) + 1
    assert any(e.name == "both" for e in p.events)
    assert any(ev.name == "both" for ev in tp.events())


def test_dataloader_waits_are_data_events(registry):
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 2))
    loader = DataLoader(data, batch_size=8)
    with ep.profile(registry=registry) as p:
        for x, _ in loader:
            Net()(x)
    waits = [e for e in p.events if e.kind == "data"]
    assert [e.name for e in waits] == ["DataLoader.next"] * 5  # four batches and the end


def test_patches_restored_after_stop_exception_interrupt_and_second_profile(registry):
    before = _state()
    with ep.profile(registry=registry):
        assert vars(nn.Module)["__call__"] is not before[0]
    assert _state() == before
    with pytest.raises(ZeroDivisionError):
        with ep.profile(registry=registry):
            1 / 0
    assert _state() == before
    with pytest.raises(KeyboardInterrupt):
        with ep.profile(registry=registry, record_ops=True):
            raise KeyboardInterrupt
    assert _state() == before
    with ep.profile(registry=registry) as p:  # a profile started while one runs is refused
        with pytest.raises(RuntimeError, match="cannot be nested"):
            ep.Profiler(registry=registry).start()
        Net()(torch.randn(1, 4))
    assert _state() == before
    assert module_events(p.events)
    model = Net()
    with ep.profile(registry=registry) as p2:  # a second profile installs again
        _train(model, steps=1)
    assert backward_groups(p2.events) and _state() == before
    for param in model.parameters():  # no hook of ours left on a parameter
        assert not param._post_accumulate_grad_hooks


def test_resumed_profiler_installs_again(registry):
    prof = ep.Profiler(registry=registry)
    model = Net()
    for _ in range(2):
        with prof:
            _train(model, steps=1)
    assert len([e for e in prof.events if e.name == "SGD.step"]) == 2
    assert len([e for e in prof.events if e.kind == "backward" and e.path == "head"]) == 2


def test_opting_out(registry):
    before = _state()
    with ep.profile(registry=registry, torch=False) as p:
        assert _state() == before
        _train(Net(), steps=1)
    assert p.events == [] and "torch" not in p.run.options


def test_run_notes_host_times(registry):
    with ep.profile(registry=registry) as p:
        pass
    notes = p.run.options["torch"]
    assert notes["framework"] == "torch" and "host times" in notes["times"]
    assert p.run.options["torch_sync"] is False


def test_no_profile_leaves_torch_untouched():
    import torch.autograd.profiler as ap

    assert vars(nn.Module)["__call__"] is nn.Module._wrapped_call_impl
    assert vars(ap.record_function)["__enter__"].__module__ == "torch.autograd.profiler"
    assert torch.autograd.backward.__module__ == "torch.autograd"


def test_torch_size_hits_the_shape_cache(registry, monkeypatch):
    from everyo.profiler.recording import recorder

    calls = []
    real = recorder._RecorderBody.__init__

    def counting_init(self, *a, **k):
        real(self, *a, **k)
        shape_id = self._shape_id
        self._shape_id = lambda *args: calls.append(1) or shape_id(*args)

    monkeypatch.setattr(recorder._RecorderBody, "__init__", counting_init)
    layer = nn.Linear(4, 4)
    with ep.profile(registry=registry) as p:
        for _ in range(20):
            layer(torch.randn(2, 4))
    assert len(module_events(p.events)) == 20
    assert len(calls) <= 2  # the first call (and the root's), then cache hits


def test_shapes_carry_dtypes_other_than_float32(registry):
    emb, layer = nn.Embedding(10, 4), nn.Linear(4, 4)
    ids = torch.tensor([[1, 2, 3]])
    with ep.profile(registry=registry) as p:
        for _ in range(2):  # the second call of each through the shape cache
            emb(ids)
            layer(torch.randn(2, 4))
            layer.double()(torch.randn(2, 4, dtype=torch.float64))
            layer.float()
    shapes = [e.shapes for e in module_events(p.events)]
    assert shapes.count("[(1, 3) int64] -> (1, 3, 4)") == 2
    assert shapes.count("[(2, 4)] -> (2, 4)") == 2  # float32, torch's default: unsaid
    assert shapes.count("[(2, 4) float64] -> (2, 4) float64") == 2


def test_record_ops_counts_flops(registry):
    layer = nn.Linear(4, 8)
    conv = nn.Conv2d(1, 2, 3)
    with ep.profile(registry=registry, record_ops=True) as p:
        layer(torch.randn(3, 4))
        conv(torch.randn(1, 1, 5, 5))
        torch.matmul(torch.randn(2, 3), torch.randn(3, 4))
    ops = {e.name: e for e in p.events if e.kind == "op"}
    assert ops["linear"].flops == 2 * 3 * 8 * 4 + 3 * 8
    assert ops["conv2d"].flops == 2 * (2 * 3 * 3) * 9 + 2 * 9
    assert ops["matmul"].flops == 2 * 2 * 4 * 3
    assert ops["linear"].parent == next(e.row for e in p.events if e.name == "Linear")


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_torchscript_module_is_one_event(registry):
    scripted = torch.jit.script(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
    with ep.profile(registry=registry) as p:
        scripted(torch.randn(2, 4)).sum().backward()
    mods = module_events(p.events)
    assert [e.name for e in mods] == ["scripted Sequential"]
    assert [g.path for g in backward_groups(p.events)] == ["0"]


def test_torch_compile_no_graph_break(registry):
    import torch._dynamo

    torch._dynamo.reset()
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
    compiled = torch.compile(model, backend="eager", fullgraph=True)  # a break would raise
    with ep.profile(registry=registry) as p:
        for _ in range(2):
            compiled(torch.randn(2, 4)).sum().backward()
    mods = module_events(p.events)
    assert [e.name for e in mods] == ["compiled Sequential"] * 2
    assert {g.path for g in backward_groups(p.events)} == {"_orig_mod.0", "_orig_mod.2"}
    torch._dynamo.reset()


def test_fx_tracing_inside_a_profile(registry):
    model = Net()
    with ep.profile(registry=registry) as p:
        traced = torch.fx.symbolic_trace(model)
        out = traced(torch.randn(2, 4))
    assert out.shape == (2, 2)
    ops = [n.op for n in traced.graph.nodes]
    assert ops.count("call_module") == 4  # the leaves stay leaves: nothing of ours traced
    assert "Net" in {e.name for e in module_events(p.events)}  # fx names its class after Net


def test_cli_and_magic_share_the_opt_out():
    import argparse

    from everyo.profiler.options import add_options, profiler_kwargs

    parser = argparse.ArgumentParser()
    add_options(parser)
    kw = profiler_kwargs(parser.parse_args(["--no-torch", "--torch-sync"]))
    assert kw["torch"] is False and kw["torch_sync"] is True
    assert profiler_kwargs(parser.parse_args([]))["torch"] is True


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA torch")
def test_cuda_backward_on_worker_threads_and_sync(registry):
    model = Net().cuda()
    with ep.profile(registry=registry, torch_sync=True) as p:
        model(torch.randn(3, 4, device="cuda")).sum().backward()  # on autograd's device thread
    assert {g.path for g in backward_groups(p.events)} == parameterised_paths(model)
    assert p.run.options["torch"]["torch_sync"] is True


@pytest.mark.parametrize("options", [{"warmup": 3}, {"schedule": ep.schedule(wait=1, active=1)}])
def test_backward_and_regions_under_warmup_and_schedule(registry, tmp_path, options):
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with ep.profile(registry=registry, **options) as p:
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(3, 4)).sum().backward()
            opt.step()
            p.step()
    groups = backward_groups(p.events)
    assert {g.path for g in groups} == parameterised_paths(model)
    p.export_chrome_trace(tmp_path / "t.json")  # (the suite's conftest checks that it nests)


class Interrupting(nn.Module):
    def forward(self, x):
        raise KeyboardInterrupt


def test_ctrl_c_inside_a_forward_restores_torch(registry, tmp_path):
    before = _state()
    model = nn.Sequential(nn.Linear(4, 4), Interrupting())
    with pytest.raises(KeyboardInterrupt):
        with ep.profile(registry=registry) as p:
            with torch.profiler.record_function("epoch"):
                model(torch.randn(2, 4))
    assert _state() == before
    assert p.run.status == "failed" and p.run.error == "KeyboardInterrupt"
    by_name = {e.name: e for e in p.events}
    assert by_name["Interrupting"].parent == by_name["Sequential"].row
    assert by_name["Sequential"].parent == by_name["epoch"].row
    p.export_chrome_trace(tmp_path / "t.json")


def test_modules_on_another_thread(registry):
    import threading

    model = Net()
    with ep.profile(registry=registry) as p:
        worker = threading.Thread(target=lambda: _train(model, steps=1), name="trainer")
        worker.start()
        worker.join()
    threads = {e.thread_id for e in p.events}
    assert len(threads) == 1 and threads != {threading.get_native_id()}
    assert {g.path for g in backward_groups(p.events)} == parameterised_paths(model)


def test_cuda_host_times_become_a_run_note(registry, monkeypatch):
    from everyo.profiler.analysis.run_analysis import run_notes

    with ep.profile(registry=registry) as p:
        pass
    assert not any("host times" in n for n in run_notes(p.run))  # no CUDA here: no note
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with ep.profile(registry=registry) as p:
        pass
    assert any("PyTorch events are host times" in n for n in run_notes(p.run))


def test_torch_sync_synchronises_at_each_module_boundary(registry, monkeypatch):
    syncs = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: syncs.append(1))
    model = Net()
    with ep.profile(registry=registry, torch_sync=True) as p:
        model(torch.randn(2, 4))
    assert len(module_events(p.events)) == 6
    assert len(syncs) == 2 * 6  # before and after each module call
    assert p.run.options["torch"]["torch_sync"] is True
    assert "synchronised" in p.run.options["torch"]["times"]


def test_compiled_function_with_record_function_and_ops(registry):
    import torch._dynamo

    torch._dynamo.reset()

    def f(x):
        with torch.profiler.record_function("inside"):
            return torch.nn.functional.linear(x, torch.ones(3, 3)).relu()

    compiled = torch.compile(f, backend="eager", fullgraph=True)  # a graph break would raise
    with ep.profile(registry=registry, record_ops=True) as p:
        out = compiled(torch.randn(2, 3))
    assert out.shape == (2, 3) and p.run.status == "completed"
    torch._dynamo.reset()


def test_a_stale_import_watch_installs_nothing(registry):
    """A profiler that started before torch was imported and never stopped (an interrupt in its
    start) leaves a watch for torch's import: when it fires, it must install nothing."""
    before = _state()
    prof = ep.Profiler(registry=registry)
    prof._begin()  # its run and recorder exist, as after an interrupted start; it is not active
    prof._torch_imported()  # the watch firing as torch is imported
    assert prof._torch is None and _state() == before


def test_an_adapter_an_interrupt_left_is_removed_by_the_next_profile(registry):
    from everyo.profiler import torch as adapters

    before = _state()
    prof = ep.Profiler(registry=registry)
    prof._begin()
    adapters.install(prof._recorder)  # as if an interrupt lost it between install and stop
    assert _state() != before
    with ep.profile(registry=registry) as p:
        _train(Net(), steps=1)
    assert _state() == before
    assert len([e for e in p.events if (e.kind, e.name) == ("backward", "backward")]) == 1


def test_restore_after_an_interrupted_restore_puts_everything_back():
    from everyo.profiler.torch.patches import Patches

    class Owner:
        a = 1

    patches = Patches()
    patches.set(Owner, "a", 2)
    patches.set(Owner, "b", 3)
    patches._saved.append((Owner, "a", 2))  # an entry whose restore was cut short, then redone
    patches.restore()
    assert Owner.a == 1 and "b" not in vars(Owner) and len(patches) == 0
    patches.restore()  # again: nothing left to do
