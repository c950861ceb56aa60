"""Reference EveryO §8 (``everyo.datasets``) and §10 (``everyo.cuda``)."""

from __future__ import annotations

import numpy as np
import pytest

import everyo as eo
from everyo import cuda, datasets


def test_generators_are_seeded_keyword_calls_returning_numpy_pairs():
    calls = {
        "make_regression": {"n_samples": 50, "n_features": 3, "noise": 0.0, "bias": 2.0},
        "make_blobs": {"n_samples": 60, "n_features": 2, "centers": 3, "spread": 0.5},
        "make_moons": {"n_samples": 40, "noise": 0.1},
        "make_spirals": {"n_samples": 60, "classes": 3, "noise": 0.1, "turns": 1.5},
        "make_xor": {"n_samples": 40, "noise": 0.1},
        "load_digits": {"samples_per_class": 5, "noise": 0.1, "max_shift": 1},
        "make_recall_task": {"n_samples": 30, "length": 6, "num_classes": 3, "vocab_size": 8},
        "make_copy_task": {"n_samples": 30, "length": 5, "vocab_size": 7},
        "make_parity_task": {"n_samples": 30, "length": 9},
    }
    for name, kw in calls.items():
        fn = getattr(datasets, name)
        X, y = fn(**kw, seed=1)
        X2, y2 = fn(**kw, seed=1)
        assert isinstance(X, np.ndarray) and isinstance(y, np.ndarray), name
        assert np.array_equal(X, X2) and np.array_equal(y, y2), name
        assert len(X) == len(y), name


def test_regression_and_classification_contents():
    X, y = datasets.make_regression(n_samples=50, n_features=3, noise=0.0, bias=2.0)
    assert X.dtype == y.dtype == np.float32 and X.shape == (50, 3) and y.shape == (50, 1)
    w, *_ = np.linalg.lstsq(np.c_[X, np.ones(50)], y, rcond=None)
    assert w[-1, 0] == pytest.approx(2.0, abs=1e-4)  # exactly linear without noise
    X, y = datasets.make_xor(n_samples=400, noise=0.1)
    assert y.dtype == np.int64 and set(y.tolist()) == {0, 1}
    assert ((X[:, 0] * X[:, 1] < 0) == (y == 1)).mean() > 0.99
    X, y = datasets.make_blobs(n_samples=90, centers=3, spread=0.5, seed=0)
    assert X.dtype == np.float32 and y.dtype == np.int64 and np.bincount(y).tolist() == [30] * 3


def test_digits_glyphs():
    assert datasets.IMAGE_SHAPE == (8, 8) and datasets.NUM_CLASSES == 10
    assert len(datasets.GLYPHS) == 10
    assert all(len(g) == 8 and all(len(row) == 8 for row in g) for g in datasets.GLYPHS)
    clean = np.stack([datasets.render_digit(d) for d in range(10)])
    assert clean.dtype == np.float32 and set(np.unique(clean)) == {0.0, 1.0}
    assert len({c.tobytes() for c in clean}) == 10
    X, y = datasets.load_digits(samples_per_class=20, noise=0.0, max_shift=0)
    assert X.shape == (200, 64) and X.dtype == np.float32 and y.dtype == np.int64
    assert X.min() >= 0 and X.max() <= 1
    # without shift or noise each sample is its glyph at an intensity in [0.7, 1]
    ratio = X.reshape(200, 8, 8).sum(axis=(1, 2)) / clean[y].sum(axis=(1, 2))
    assert ratio.min() >= 0.7 and ratio.max() <= 1.0
    noisy, _ = datasets.load_digits(samples_per_class=2, flatten=False)
    assert noisy.shape == (20, 8, 8)
    for bad in ({"samples_per_class": 0}, {"noise": -0.1}):
        with pytest.raises(ValueError):
            datasets.load_digits(**bad)
    for bad in (-1, 10, 2.0):
        with pytest.raises(ValueError):
            datasets.render_digit(bad)


def test_digits_are_learnable():
    X, y = datasets.load_digits(samples_per_class=30, seed=0)
    model = eo.Sequential(eo.Linear(64, 10, seed=0))
    trainer = eo.Trainer(model, eo.Adam(model.parameters(), lr=0.05), eo.CrossEntropyLoss(),
                         metrics=["accuracy"])  # fmt: skip
    trainer.fit(eo.DataLoader(eo.ArrayDataset(X, y), 50, shuffle=True, seed=0), epochs=15,
                verbose=False)  # fmt: skip
    assert trainer.history.last["accuracy"] > 0.9


def test_sequence_tasks():
    X, y = datasets.make_recall_task(n_samples=100, length=6, num_classes=3, vocab_size=8)
    assert X.dtype == y.dtype == np.int64 and X.shape == (100, 6)
    assert np.array_equal(X[:, 0], y) and X[:, 1:].min() >= 3 and X.max() < 8
    seq, copy = datasets.make_copy_task(n_samples=10, length=5, vocab_size=7)
    assert np.array_equal(seq, copy) and seq is not copy and seq.max() < 7
    bits, parity = datasets.make_parity_task(n_samples=50, length=9)
    assert set(np.unique(bits)) <= {0, 1} and np.array_equal(bits.sum(axis=1) % 2, parity)
    with pytest.raises(ValueError):
        datasets.make_recall_task(num_classes=4, vocab_size=4)
    with pytest.raises(ValueError):
        datasets.make_recall_task(length=0)
    with pytest.raises(ValueError):
        datasets.make_regression(n_samples=0)


A = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
B = np.ones((3, 2), dtype=np.float32)


def test_cuda_kernels_compute_with_or_without_a_gpu():
    assert cuda.add(A, A).tolist() == (2 * A).tolist()
    assert cuda.multiply(A, A).tolist() == (A * A).tolist()
    assert cuda.matmul(A, B).tolist() == (A @ B).tolist()
    assert cuda.relu(A).tolist() == np.maximum(A, 0).tolist()
    total = cuda.sum_all(A)
    assert total.shape == () and total.dtype == np.float32 and float(total) == A.sum()
    # ineligible inputs take the NumPy path, also with a GPU
    assert cuda.add(A.astype(np.float64), A).dtype == np.float64
    assert cuda.KERNEL_NAMES == ("add", "multiply", "matmul", "relu", "sum_all")


def test_cuda_status_functions():
    info = cuda.runtime_info()
    assert {"available", "extension", "device_count", "reason", "devices"} <= set(info)
    assert info["available"] == cuda.is_available() == (cuda.device_count() > 0)
    assert (cuda.unavailable_reason() is None) == cuda.is_available()
    cuda.reset_cache()
    assert cuda.device_count() == info["device_count"]


def test_disabled_cuda_reports_why_and_strict_calls_raise(monkeypatch):
    monkeypatch.setenv("EVERYO_DISABLE_CUDA", "1")
    assert not cuda.is_available() and cuda.device_count() == 0
    assert "EVERYO_DISABLE_CUDA" in cuda.unavailable_reason()
    with pytest.raises(eo.EveryOCudaError):
        cuda.add(A, A, strict=True)
    with pytest.raises(eo.EveryOCudaError):
        cuda.to_device(A)
    assert cuda.relu(A).tolist() == np.maximum(A, 0).tolist()  # the fallback still works


@pytest.mark.gpu
def test_cuda_resident_tensor_and_strict_dtype():
    r = cuda.to_device(A)
    assert r.shape == (2, 3) and r.size == 6 and r.device == "cuda"
    assert (r + r).numpy().tolist() == (2 * A).tolist()
    assert (r * r).relu().numpy().tolist() == (A * A).tolist()
    assert (r @ cuda.to_device(B)).numpy().tolist() == (A @ B).tolist()
    assert r.sum() == float(A.sum())
    with pytest.raises(TypeError):
        r + A
    with pytest.raises(eo.EveryOCudaError):
        cuda.to_device(A.astype(np.float64))
    with pytest.raises(eo.EveryOShapeError):
        cuda.to_device(np.zeros(0, np.float32))
    with pytest.raises(eo.EveryOCudaError):
        cuda.multiply(A.astype(np.float64), A, strict=True)
