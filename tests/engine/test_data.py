"""DataLoader semantics: lengths, batch sizes, shuffling, seeds, fast path, collate, devices,
prefetching (same batches, errors re-raised, thread stopped), errors, profiler regions."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest
from test_nn_module import profiling

import everyo as eo
from everyo.data import Subset, default_collate, random_split

X = np.arange(40, dtype=np.float32).reshape(20, 2)
Y = np.arange(20)


class ListDataset:
    """A generic dataset (no ArrayDataset): per-sample calls and collate."""

    def __init__(self, n=20):
        self.n, self.calls = n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.calls += 1
        return X[i], int(Y[i])


def _targets(loader):
    return [b[1].numpy().tolist() for b in loader]


def test_batch_sizes_and_len():
    loader = eo.DataLoader(eo.ArrayDataset(X, Y), batch_size=6)
    assert len(loader) == 4
    assert [len(b[0]) for b in loader] == [6, 6, 6, 2]
    dropped = eo.DataLoader(eo.ArrayDataset(X, Y), batch_size=6, drop_last=True)
    assert len(dropped) == 3 and [len(b[1]) for b in dropped] == [6, 6, 6]


def test_guide_sizes():
    ds = eo.ArrayDataset(np.zeros((10000, 32), np.float32), np.zeros(10000, np.int64))
    assert len(eo.DataLoader(ds, batch_size=128, shuffle=True, seed=42)) == 79
    assert len(eo.DataLoader(ds, batch_size=128, drop_last=True)) == 78


def test_batches_are_tensors_in_order():
    x, y = next(iter(eo.DataLoader(eo.ArrayDataset(X, Y), batch_size=6)))
    assert isinstance(x, eo.Tensor) and isinstance(y, eo.Tensor)
    assert x.dtype == np.float32 and y.dtype == np.int64
    np.testing.assert_array_equal(x.numpy(), X[:6])
    only = next(iter(eo.DataLoader(eo.ArrayDataset(X), batch_size=5)))
    assert isinstance(only, eo.Tensor) and only.shape == (5, 2)


@pytest.mark.parametrize("dataset", ["array", "generic"])
def test_shuffle_covers_every_sample_once_and_reshuffles(dataset):
    ds = eo.ArrayDataset(X, Y) if dataset == "array" else ListDataset()
    loader = eo.DataLoader(ds, batch_size=6, shuffle=True, seed=3)
    first = np.concatenate(_targets(loader))
    second = np.concatenate(_targets(loader))
    assert sorted(first.tolist()) == list(range(20)) == sorted(second.tolist())
    assert not np.array_equal(first, second)  # a new order each epoch
    assert not np.array_equal(first, np.arange(20))


def test_same_seed_same_order_across_loaders_and_paths():
    a = eo.DataLoader(eo.ArrayDataset(X, Y), 6, shuffle=True, seed=7)
    b = eo.DataLoader(eo.ArrayDataset(X, Y), 6, shuffle=True, seed=7)
    c = eo.DataLoader(ListDataset(), 6, shuffle=True, seed=7)
    epochs_a = [_targets(a) for _ in range(2)]
    assert epochs_a == [_targets(b) for _ in range(2)] == [_targets(c) for _ in range(2)]
    assert _targets(eo.DataLoader(eo.ArrayDataset(X, Y), 6, shuffle=True, seed=8)) != epochs_a[0]


def test_fast_path_for_array_dataset_and_subsets():
    ds = eo.ArrayDataset(X, Y)
    assert eo.DataLoader(ds).fast_path
    sub = Subset(Subset(ds, [5, 6, 7, 8, 9, 10]), [1, 3, 5])
    loader = eo.DataLoader(sub, batch_size=2)
    assert loader.fast_path and _targets(loader) == [[6, 8], [10]]
    assert not eo.DataLoader(ListDataset()).fast_path
    assert not eo.DataLoader(ds, collate_fn=default_collate).fast_path


def test_generic_path_matches_fast_path():
    generic = ListDataset()
    for (xa, ya), (xb, yb) in zip(eo.DataLoader(eo.ArrayDataset(X, Y), 7),
                                  eo.DataLoader(generic, 7)):  # fmt: skip
        np.testing.assert_array_equal(xa.numpy(), xb.numpy())
        np.testing.assert_array_equal(ya.numpy(), yb.numpy())
    assert generic.calls == 20


def test_default_collate_structures():
    batch = default_collate([{"a": np.ones(2), "b": (1, 2.0)}, {"a": np.zeros(2), "b": (3, 4.0)}])
    assert batch["a"].shape == (2, 2) and batch["b"][0].numpy().tolist() == [1, 3]
    assert isinstance(batch["b"][1], eo.Tensor)
    t = default_collate([eo.ones(3), eo.zeros(3)])
    assert t.shape == (2, 3)
    with pytest.raises(TypeError, match="collate_fn"):
        default_collate([object(), object()])


def test_custom_collate_and_device(device_name):
    loader = eo.DataLoader(ListDataset(), 5, collate_fn=lambda s: np.stack([x for x, _ in s]),
                           device=device_name)  # fmt: skip
    batch = next(iter(loader))
    assert isinstance(batch, eo.Tensor) and str(batch.device).startswith(device_name)
    x, y = next(iter(eo.DataLoader(eo.ArrayDataset(X, Y), 4, device=device_name)))
    assert str(x.device).startswith(device_name) and str(y.device).startswith(device_name)


def test_random_split():
    a, b = random_split(eo.ArrayDataset(X, Y), [15, 5], seed=0)
    assert len(a) == 15 and len(b) == 5
    assert sorted(np.concatenate([a.indices, b.indices]).tolist()) == list(range(20))
    fa, fb, fc = random_split(eo.ArrayDataset(X, Y), [0.5, 0.3, 0.2], seed=0)
    assert (len(fa), len(fb), len(fc)) == (10, 6, 4)
    with pytest.raises(ValueError, match="sum"):
        random_split(eo.ArrayDataset(X, Y), [10, 5])


def test_errors():
    with pytest.raises(ValueError, match="batch_size"):
        eo.DataLoader(eo.ArrayDataset(X, Y), batch_size=0)
    with pytest.raises(TypeError, match="ArrayDataset"):
        eo.DataLoader(X.tolist().__iter__())
    with pytest.raises(TypeError, match="ArrayDataset"):
        eo.DataLoader(42)
    with pytest.raises(eo.EveryOShapeError, match="aligned"):
        eo.ArrayDataset(X, Y[:5])
    with pytest.raises(IndexError):
        Subset(eo.ArrayDataset(X, Y), [25])


@pytest.mark.parametrize("dataset", ["array", "generic"])
def test_prefetch_gives_the_same_batches(dataset):
    def make(prefetch):
        ds = eo.ArrayDataset(X, Y) if dataset == "array" else ListDataset()
        return eo.DataLoader(ds, 6, shuffle=True, seed=1, prefetch=prefetch)

    plain, ahead = make(0), make(2)
    for _ in range(2):
        assert _targets(plain) == _targets(ahead)


class Failing(ListDataset):
    def __getitem__(self, i):
        if i == 13:
            raise KeyError("sample 13 is broken")
        return super().__getitem__(i)


def test_prefetch_reraises_worker_errors():
    loader = eo.DataLoader(Failing(), 6, prefetch=2)
    it = iter(loader)
    assert len(next(it)[0]) == 6 and len(next(it)[0]) == 6
    with pytest.raises(KeyError, match="sample 13"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def _prefetch_threads():
    return [t for t in threading.enumerate() if t.name == "everyo-dataloader-prefetch"]


def test_prefetch_thread_stops_when_iterator_is_dropped():
    before = len(_prefetch_threads())
    loader = eo.DataLoader(eo.ArrayDataset(np.zeros((1000, 2), np.float32)), 1, prefetch=1)
    it = iter(loader)
    next(it)
    assert len(_prefetch_threads()) == before + 1
    del it
    gc.collect()
    deadline = time.monotonic() + 5
    while len(_prefetch_threads()) > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(_prefetch_threads()) == before
    for _ in loader:  # a finished epoch leaves no thread either
        pass
    assert len(_prefetch_threads()) == before


@pytest.mark.parametrize("prefetch", [0, 2])
def test_profiler_records_data_regions(prefetch):
    loader = eo.DataLoader(eo.ArrayDataset(X, Y), 6, prefetch=prefetch)
    with profiling() as p:
        for _ in loader:
            pass
    assert [(n, k, m["batch_size"]) for n, k, m in p.regions] == [
        ("DataLoader.next", "data", s) for s in (6, 6, 6, 2)
    ]


@pytest.mark.gpu
def test_array_dataset_resident_on_the_gpu():
    ds = eo.ArrayDataset(eo.tensor(X, device="cuda"), eo.tensor(Y, device="cuda"))
    for shuffle in (False, True):
        loader = eo.DataLoader(ds, 6, shuffle=shuffle, seed=0)
        batches = list(loader)
        assert all(str(x.device) == "cuda:0" for x, _ in batches)
        assert sorted(np.concatenate([y.numpy() for _, y in batches]).tolist()) == list(range(20))


# ---- messages that name what the user passed (issue 12 §3) ---------------------------------


class BrokenAt37(ListDataset):
    def __init__(self):
        super().__init__(n=64)

    def __getitem__(self, i):
        if i == 37:
            raise KeyError("no record for this id")
        return np.zeros(2, np.float32), i % 3


def _notes(exc) -> str:
    return "\n".join(getattr(exc, "__notes__", []))


@pytest.mark.parametrize("prefetch", [0, 2])
@pytest.mark.parametrize("shuffle", [False, True])
def test_failing_sample_keeps_its_type_and_names_its_index(prefetch, shuffle):
    loader = eo.DataLoader(BrokenAt37(), 8, shuffle=shuffle, seed=0, prefetch=prefetch)
    with pytest.raises(KeyError, match="no record") as info:
        for _ in loader:
            pass
    notes = _notes(info.value)
    assert "BrokenAt37[37]" in notes and "index 37" in notes


def test_failing_sample_inside_a_subset_names_the_loaders_index():
    sub = Subset(BrokenAt37(), [0, 1, 37])
    with pytest.raises(KeyError) as info:
        list(eo.DataLoader(sub, 3))
    assert "Subset[2]" in _notes(info.value)


@pytest.mark.parametrize("seed", ["abc", 1.5, True, [1, 2]])
def test_seed_of_the_wrong_type_names_the_argument_and_the_fix(seed):
    with pytest.raises(TypeError, match=r"seed must be a whole number >= 0 or None") as info:
        eo.DataLoader(eo.ArrayDataset(X, Y), 4, shuffle=True, seed=seed)
    assert "seed=0" in str(info.value) and "SeedSequence" not in str(info.value)


def test_negative_seed_names_the_argument_and_the_fix():
    with pytest.raises(eo.EveryOConfigError, match=r"seed must be .* >= 0.* got -1") as info:
        eo.DataLoader(eo.ArrayDataset(X, Y), 4, seed=-1)
    assert isinstance(info.value, ValueError) and "seed=0" in str(info.value)
    with pytest.raises(eo.EveryOConfigError, match="random_split seed"):
        random_split(eo.ArrayDataset(X, Y), [10, 10], seed=-1)
    eo.DataLoader(eo.ArrayDataset(X, Y), 4, seed=np.int64(3))  # NumPy ints are ints
    eo.DataLoader(eo.ArrayDataset(X, Y), 4, seed=np.random.default_rng(0))  # as default_rng


@pytest.mark.parametrize("prefetch", ["x", 1.5, True])
def test_prefetch_of_the_wrong_type_names_the_argument(prefetch):
    with pytest.raises(TypeError, match=r"prefetch is a number of batches .*prefetch=2") as info:
        eo.DataLoader(eo.ArrayDataset(X, Y), 4, prefetch=prefetch)
    assert "invalid literal" not in str(info.value)
    with pytest.raises(eo.EveryOConfigError, match="prefetch"):
        eo.DataLoader(eo.ArrayDataset(X, Y), 4, prefetch=-1)


class Ragged(ListDataset):
    def __getitem__(self, i):
        return np.zeros(1 + i % 3, np.float32), i


def test_ragged_samples_say_which_shapes_differ_and_what_to_do():
    with pytest.raises(eo.EveryOShapeError) as info:
        list(eo.DataLoader(Ragged(), 4))
    message = str(info.value)
    assert "(1,)" in message and "(2,)" in message and "collate_fn=" in message
    assert "all input arrays" not in message and isinstance(info.value, ValueError)
    assert "indices 0, 1, 2, 3" in _notes(info.value)


def test_samples_with_lists_of_different_lengths_say_so():
    with pytest.raises(eo.EveryOShapeError, match=r"sample 1 has 3 fields but sample 0 has 2"):
        default_collate([[1, 2], [1, 2, 3]])


def test_ragged_array_dataset_rows_name_the_argument():
    with pytest.raises(eo.EveryODTypeError, match=r"ArrayDataset features: row 1 has 1 .* row 0"):
        eo.ArrayDataset([[1.0, 2.0], [3.0]])
    with pytest.raises(eo.EveryODTypeError, match=r"ArrayDataset targets"):
        eo.ArrayDataset(X[:2], [[1], [2, 3]])
