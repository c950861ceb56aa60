"""Module: registration, traversal and dotted paths, modes, state dicts, devices, hooks, repr,
containers, and the profiler hook point."""

from __future__ import annotations

import contextlib
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import everyo as eo
import everyo.nn.module as module_mod
from everyo.profiler import RunRegistry
from everyo.profiler.recording import hooks, recorder


class FakeProfiler:
    """Implements the hook protocol and records what the engine hands it."""

    record_ops = False

    def __init__(self):
        self.modules, self.regions = [], []

    def module_call(self, module, forward, args, kwargs):
        self.modules.append(type(module).__name__)
        return forward(*args, **kwargs)

    @contextlib.contextmanager
    def region(self, name, kind, **metadata):
        self.regions.append((name, kind, metadata))
        yield

    def scope(self):
        return None

    def backward_call(self, run, *args):
        return run(*args)

    def backward_node(self, scope, name, fn):
        return fn()


@contextlib.contextmanager
def profiling():
    p = FakeProfiler()
    hooks.set_active(p)
    try:
        yield p
    finally:
        hooks.set_active(None)


class Block(eo.Module):
    def __init__(self):
        super().__init__()
        self.attn = eo.Linear(4, 4, seed=0)
        self.norm = eo.BatchNorm1d(4)

    def forward(self, x):
        return self.norm(self.attn(x))


class Net(eo.Module):
    def __init__(self):
        super().__init__()
        self.encoder = eo.Module()
        self.encoder.layers = eo.ModuleList([Block(), Block()])
        self.head = eo.Linear(4, 2, seed=1)
        self.scale = eo.nn.Parameter(eo.ones(1))

    def forward(self, x):
        for layer in self.encoder.layers:
            x = layer(x)
        return self.head(x) * self.scale


def test_named_modules_dotted_paths():
    net = Net()
    paths = [p for p, _ in net.named_modules()]
    assert paths == ["", "encoder", "encoder.layers", "encoder.layers.0", "encoder.layers.0.attn",
                     "encoder.layers.0.norm", "encoder.layers.1", "encoder.layers.1.attn",
                     "encoder.layers.1.norm", "head"]  # fmt: skip
    assert len(list(net.modules())) == len(paths)
    assert [n for n, _ in net.named_children()] == ["encoder", "head"]


def test_parameters_buffers_counts():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names[0] == "scale" and "encoder.layers.1.norm.bias" in names and "head.weight" in names
    assert len(names) == 2 * 4 + 2 + 1
    assert net.num_parameters() == 2 * (16 + 4 + 4 + 4) + 8 + 2 + 1
    assert [n for n, _ in net.named_buffers()][:3] == [
        "encoder.layers.0.norm.running_mean", "encoder.layers.0.norm.running_var",
        "encoder.layers.0.norm.num_batches_tracked"]  # fmt: skip
    net.head.requires_grad_(False)
    assert net.num_parameters(trainable_only=True) == net.num_parameters() - 10


def test_shared_parameters_counted_once():
    shared = eo.Linear(3, 3, seed=0)
    seq = eo.Sequential(shared, eo.ReLU(), shared)
    assert len(list(seq.parameters())) == 2
    assert [p for p, _ in seq.named_modules()] == ["", "0", "1"]


def test_reassigning_and_deleting_attributes():
    m = eo.Module()
    m.w = eo.nn.Parameter(eo.zeros(2))
    m.w = eo.zeros(2)  # a plain tensor is no longer a parameter
    assert list(m.parameters()) == []
    m.sub = eo.Linear(2, 2)
    del m.sub
    assert list(m.children()) == [] and not hasattr(m, "sub")


def test_setattr_before_init_is_clear():
    class Bad(eo.Module):
        def __init__(self):
            self.fc = eo.Linear(2, 2)

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_train_eval_apply_zero_grad():
    net = Net()
    assert net.training and net.head.training
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 3
    net(eo.ones(5, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(abs(p.grad.numpy()).sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_state_dict_round_trip():
    a, b = Net(), Net()
    with eo.no_grad():
        for p in a.parameters():
            p.data[...] = np.random.default_rng(0).standard_normal(p.shape)
    a(eo.ones(3, 4))  # updates BatchNorm buffers
    sd = a.state_dict()
    assert list(sd)[0] == "scale" and "encoder.layers.0.norm.running_var" in sd
    weight_before = b.head.weight
    b.load_state_dict(sd)
    assert b.head.weight is weight_before  # loaded in place: optimizers keep working
    for k, v in b.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), sd[k].numpy())
    x = eo.ones(3, 4)
    a.eval(), b.eval()
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    # state_dict values share memory: they are views, not copies
    sd["head.bias"].data[...] = 7
    assert float(a.head.bias.numpy()[0]) == 7


def test_load_state_dict_errors():
    net = Net()
    sd = net.state_dict()
    missing = {k: v for k, v in sd.items() if k != "head.bias"}
    with pytest.raises(eo.EveryOSerializationError, match="missing keys.*head.bias"):
        net.load_state_dict(missing)
    extra = dict(sd, bogus=eo.zeros(1))
    with pytest.raises(eo.EveryOSerializationError, match="unexpected keys.*bogus"):
        net.load_state_dict(extra)
    result = net.load_state_dict(extra, strict=False)
    assert result.unexpected_keys == ["bogus"] and result.missing_keys == []
    wrong = dict(sd)
    wrong["head.weight"] = np.zeros((3, 4), np.float32)
    with pytest.raises(eo.EveryOShapeError, match=r"head.weight.*\(3, 4\).*\(2, 4\)"):
        net.load_state_dict(wrong)


def test_to_device_and_dtype(device_name):
    net = Net()
    net(eo.ones(2, 4)).sum().backward()
    params = list(net.parameters())
    net.to(device_name)
    assert all(str(p.device).startswith(device_name) for p in net.parameters())
    assert all(str(b.device).startswith(device_name) for b in net.buffers())
    assert list(net.parameters()) == params  # the same objects, moved in place
    net.to(dtype="float64")
    assert net.head.weight.dtype == np.float64 and net.head.weight.grad.dtype == np.float64
    assert net.encoder.layers[0].norm.num_batches_tracked.dtype == np.int64
    out = net(eo.ones(2, 4, dtype="float64", device=device_name))
    assert out.dtype == np.float64


def test_forward_hooks():
    lin = eo.Linear(2, 2, seed=0)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    h2 = lin.register_forward_hook(lambda m, args, out: out * 0)
    assert float(abs(lin(eo.ones(1, 2)).numpy()).sum()) == 0 and calls == ["pre"]
    h2.remove()
    assert float(abs(lin(eo.ones(1, 2)).numpy()).sum()) > 0
    h1.remove()
    assert not lin._hooked
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    np.testing.assert_allclose(lin(eo.ones(1, 2)).numpy(), lin.bias.numpy()[None])


def test_repr_is_a_tree():
    text = repr(eo.Sequential(eo.Linear(4, 16, seed=0), eo.ReLU(), eo.Sequential(eo.Tanh())))
    assert text == (
        "Sequential(\n  (0): Linear(in_features=4, out_features=16, bias=True)\n  (1): ReLU()\n"
        "  (2): Sequential(\n    (0): Tanh()\n  )\n)"
    )
    assert repr(eo.Dropout(0.2)) == "Dropout(p=0.2, inplace=False)"


def test_sequential_container_protocol():
    layers = [eo.Linear(4, 8, seed=0), eo.ReLU(), eo.Linear(8, 2, seed=1)]
    seq = eo.Sequential(*layers)
    assert len(seq) == 3 and list(seq) == layers and seq[-1] is layers[2]
    head = seq[:2]
    assert isinstance(head, eo.Sequential) and len(head) == 2 and head[0] is layers[0]
    assert head(eo.zeros(3, 4)).shape == (3, 8)
    seq.append(eo.Softmax(dim=-1))
    assert len(seq) == 4 and [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    np.testing.assert_allclose(seq(eo.zeros(5, 4)).numpy().sum(axis=1), 1.0, rtol=1e-6)
    with pytest.raises(IndexError):
        seq[10]
    with pytest.raises(TypeError):
        seq.append(lambda x: x)
    named = eo.Sequential(OrderedDict(fc=eo.Linear(2, 2), act=eo.ReLU()))
    assert named["fc"] is named[0] and [p for p, _ in named.named_modules()] == ["", "fc", "act"]
    named[1] = tanh = eo.Tanh()  # replaces "act" in place, under its name
    assert named["act"] is tanh and [n for n, _ in named.named_children()] == ["fc", "act"]


def test_module_list_and_dict():
    ml = eo.ModuleList([eo.Linear(2, 2) for _ in range(3)])
    ml.insert(0, eo.ReLU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "Linear", "Linear", "Linear"]
    del ml[0]
    assert len(ml) == 3 and [n for n, _ in ml.named_children()] == ["0", "1", "2"]
    assert len(list(ml.parameters())) == 6
    md = eo.nn.ModuleDict({"enc": eo.Linear(2, 3), "dec": eo.Linear(3, 2)})
    assert list(md) == ["enc", "dec"] and "enc" in md and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight",
                                                    "dec.bias"]  # fmt: skip


def test_profiler_hook_point_records_every_module_call():
    model = eo.Sequential(eo.Linear(4, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
    lin = model[0]
    lin.register_forward_hook(lambda m, a, o: o * 0)
    with profiling() as p:
        out = model(eo.zeros(32, 4))
    assert p.modules == ["Sequential", "Linear", "ReLU", "Linear"]
    assert out.shape == (32, 2)
    assert model[1](eo.zeros(1)).shape == (1,)  # off again: plain call


def test_parameter():
    p = eo.nn.Parameter(np.ones((2, 2), np.float32))
    assert p.requires_grad and p.is_leaf and isinstance(p, eo.Tensor)
    assert repr(p).startswith("Parameter containing:")
    with pytest.raises(eo.EveryODTypeError):
        eo.nn.Parameter(np.arange(3))
    assert not eo.nn.Parameter(np.arange(3), requires_grad=False).requires_grad


class Echo(eo.Module):
    def forward(self, *args, **kwargs):
        return args, kwargs


if issubclass(Echo, module_mod._PyModuleCall):  # EVERYO_PURE_PYTHON=1 or no compiler
    PyEcho = Echo
else:

    class PyEcho(module_mod._PyModuleCall, Echo):
        """Echo with the Python ``Module.__call__`` (the fallback without the extension)."""


# Module.__call__ is compiled C where the extension was built (module.ModuleBase); both
# implementations must behave the same
CALLS = [Echo, PyEcho]


@pytest.mark.parametrize("cls", CALLS, ids=["Module.__call__", "_PyModuleCall"])
@pytest.mark.parametrize("active", ["off", "fake", "profiler"])
def test_call_passes_every_calling_convention(active, cls):
    m = cls()
    ctx = {
        "off": contextlib.nullcontext,
        "fake": profiling,
        "profiler": lambda: eo.profile(registry=RunRegistry()),
    }[active]()
    with ctx as p:
        assert m() == ((), {})
        assert m(1) == ((1,), {})
        assert m(1, 2) == ((1, 2), {})
        assert m(1, x=3) == ((1,), {"x": 3})
        assert m(x=3) == ((), {"x": 3})
        seen = []
        m.register_forward_pre_hook(lambda mod, args: seen.append(args))
        m.register_forward_hook(lambda mod, args, out: (out, "hooked") if args else None)
        assert m(1) == (((1,), {}), "hooked") and m() == ((), {})
        assert seen == [(1,), ()]
    if active == "fake":
        assert p.modules == [cls.__name__] * 7
    if active == "profiler":
        assert [e.name for e in p.events] == [cls.__name__] * 7


@pytest.mark.parametrize("cls", CALLS, ids=["Module.__call__", "_PyModuleCall"])
def test_call_errors_read_as_python_ones(cls):
    class NoInit(cls):
        def __init__(self):  # forgot super().__init__()
            pass

    with pytest.raises(AttributeError):
        NoInit()(1)

    class Raises(cls):
        def forward(self, x):
            raise ValueError(f"bad {x}")

    m = Raises()
    with pytest.raises(ValueError, match="bad 3"):
        m(3)
    with eo.profile(registry=RunRegistry()) as p, pytest.raises(ValueError, match="bad 4"):
        m(4)
    assert [e.name for e in p.events] == ["Raises"]  # the failed call is still recorded


def test_module_call_is_compiled_where_the_extension_is_built():
    if module_mod.ModuleBase is None:
        assert module_mod.IMPLEMENTATION == "python"
        assert eo.Module.__mro__[1] is module_mod._PyModuleCall
    else:  # the engine's own extension, entering the compiled recorder through its contract
        assert eo.Module.__mro__[1] is module_mod.ModuleBase
        assert module_mod.ModuleBase.__module__ == "everyo.nn._cmodule"
        direct = recorder.CRecorder is not None
        assert module_mod.IMPLEMENTATION == ("c" if direct else "c, module_call by name")
    assert copy.deepcopy(eo.Linear(2, 2, seed=0)).weight.shape == (2, 2)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):  # 0 and 1 go through copyreg
        assert pickle.loads(pickle.dumps(eo.ReLU(), protocol=protocol)).training


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_modules_with_parameters_pickle_with_every_protocol(protocol):
    # protocols 0 and 1 (copyreg) refuse a class with __slots__ that does not say how
    model = eo.Sequential(eo.Linear(3, 4, seed=0), eo.ReLU(), eo.Linear(4, 2, seed=1))
    x = eo.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    loaded = pickle.loads(pickle.dumps(model, protocol=protocol))
    np.testing.assert_array_equal(loaded(x).data, model(x).data)
    weight = loaded[0].weight
    assert isinstance(weight, eo.nn.Parameter) and weight.requires_grad and weight.grad is None
    assert weight._device is eo.device("cpu")  # the shared device: ops compare them with `is`
    loaded(x).sum().backward()
    assert weight.grad.shape == (4, 3)


class _NamedTensor(eo.Tensor):  # a user's subclass: it has a __dict__ (module level: picklable)
    pass


class _SlottedTensor(eo.Tensor):
    __slots__ = ("unit",)


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_tensor_subclasses_keep_their_own_attributes_when_pickled_and_copied(protocol):
    # Tensor.__getstate__ (protocols 0 and 1 need one) must not drop what a subclass adds:
    # object's default pickled and copied an instance's __dict__ and every slot
    named = _NamedTensor([1.0, 2.0])
    named.label = "logits"
    slotted = _SlottedTensor([3.0])
    slotted.unit = "ms"
    for copied in (
        pickle.loads(pickle.dumps(named, protocol=protocol)),
        copy.copy(named),
        copy.deepcopy(named),
    ):
        assert type(copied) is _NamedTensor and copied.label == "logits"
        np.testing.assert_array_equal(copied.data, [1.0, 2.0])
    for copied in (pickle.loads(pickle.dumps(slotted, protocol=protocol)), copy.deepcopy(slotted)):
        assert copied.unit == "ms" and copied._device is eo.device("cpu")


def test_a_tensor_pickled_before_devices_were_shared_loads_on_the_shared_device(monkeypatch):
    # files pickled before Device.__reduce__ hold a copy of the device: loading must still give
    # the shared one, which the ops' fast paths compare with `is`
    monkeypatch.delattr(eo.Device, "__reduce__")
    t = eo.tensor([1.0, 2.0])
    old_files = [pickle.dumps(t, protocol=p) for p in range(2, pickle.HIGHEST_PROTOCOL + 1)]
    old_files.append(pickle.dumps(eo.Linear(2, 2, seed=0), protocol=pickle.HIGHEST_PROTOCOL))
    monkeypatch.undo()
    for data in old_files:
        loaded = pickle.loads(data)
        tensor = loaded if isinstance(loaded, eo.Tensor) else loaded.weight
        assert tensor._device is eo.device("cpu")


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_a_tensor_made_by_an_op_pickles_as_a_leaf_that_requires_grad(protocol):
    # its graph holds the ops' closures (not picklable: a raw AttributeError before) and the
    # tensors it came from; as torch does, the loaded tensor is a leaf, requires_grad kept
    x = eo.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    for copied in (pickle.loads(pickle.dumps(y, protocol=protocol)), copy.deepcopy(y)):
        assert copied.is_leaf and copied.requires_grad and copied.grad is None
        np.testing.assert_array_equal(copied.data, [3.0, 6.0])
        (copied * copied).sum().backward()
        np.testing.assert_array_equal(copied.grad.data, [6.0, 12.0])
    assert x.grad is None and not y.is_leaf  # the original and its graph are untouched
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.data, [3.0, 3.0])
