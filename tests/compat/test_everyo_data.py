"""Reference EveryO §5 (data): datasets, CSV loading, loaders, splits and preprocessing."""

from __future__ import annotations

import numpy as np
import pytest

import everyo as eo

X = np.arange(40, dtype=np.float32).reshape(20, 2)
Y = np.repeat([0, 1], [14, 6])


def test_array_dataset_keeps_dtype_and_shapes():
    ds = eo.ArrayDataset(np.arange(12, dtype=np.int32).reshape(6, 2), np.arange(6))
    assert len(ds) == 6 and ds.feature_shape == (2,) and ds.features.dtype == np.int32
    x, y = ds[4]
    assert x.tolist() == [8, 9] and int(y) == 4
    assert eo.ArrayDataset(X).targets is None and eo.ArrayDataset(X)[1].tolist() == [2.0, 3.0]
    with pytest.raises(eo.EveryOShapeError):
        eo.ArrayDataset(X, Y[:5])
    with pytest.raises(eo.EveryOShapeError):
        eo.ArrayDataset(np.float32(1.0))


def test_transform_dataset_maps_features_and_targets_lazily():
    calls = []

    def double(x):
        calls.append(1)
        return x * 2

    ds = eo.TransformDataset(eo.ArrayDataset(X, Y), transform=double,
                             target_transform=lambda y: y + 10)  # fmt: skip
    assert len(ds) == 20 and not calls
    x, y = ds[3]
    assert x.tolist() == [12.0, 14.0] and y == 10 and len(calls) == 1
    only = eo.TransformDataset(eo.ArrayDataset(X), transform=lambda x: -x)
    assert only[0].tolist() == [-0.0, -1.0]
    assert eo.TransformDataset(eo.ArrayDataset(X, Y))[3][1] == Y[3]  # no functions: unchanged
    xb, yb = next(iter(eo.DataLoader(ds, batch_size=4)))
    assert xb.shape == (4, 2) and yb.tolist() == [10, 10, 10, 10]


def test_subset_and_random_split():
    sub = eo.Subset(eo.ArrayDataset(X, Y), [3, 1])
    assert len(sub) == 2 and sub[0][0].tolist() == [6.0, 7.0]
    assert sub.indices.dtype == np.int64
    with pytest.raises(IndexError):
        eo.Subset(eo.ArrayDataset(X), [20])
    a, b = eo.random_split(eo.ArrayDataset(X, Y), [0.75, 0.25], seed=0)
    assert (len(a), len(b)) == (15, 5)
    assert sorted(np.concatenate([a.indices, b.indices]).tolist()) == list(range(20))
    with pytest.raises(ValueError):
        eo.random_split(eo.ArrayDataset(X), [0.5, 0.3])


def test_load_csv_dataset(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b,id,label\n1,2,100,0\n\n3,4,101,1\n5,6,102,1\n")
    ds = eo.load_csv_dataset(path, target_column="label", skip_columns=["id"])
    assert isinstance(ds, eo.ArrayDataset)
    assert ds.features.dtype == np.float32 and ds.features.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert ds.targets.dtype == np.float32 and ds.targets.tolist() == [0.0, 1.0, 1.0]
    by_index = eo.load_csv_dataset(path, skip_columns=[2])  # target -1, header detected
    assert by_index.features.tolist() == ds.features.tolist()
    plain = tmp_path / "plain.tsv"
    plain.write_text("1\t2\t3\n4\t5\t6\n")
    no_target = eo.load_csv_dataset(plain, delimiter="\t", target_column=None)
    assert no_target.targets is None and no_target.features.shape == (2, 3)
    first = eo.load_csv_dataset(plain, delimiter="\t", target_column=0, has_header=False)
    assert first.targets.tolist() == [1.0, 4.0] and first.features.tolist() == [[2, 3], [5, 6]]


def test_load_csv_dataset_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        eo.load_csv_dataset(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(eo.EveryOShapeError, match="empty"):
        eo.load_csv_dataset(empty)
    bad = tmp_path / "bad.csv"
    bad.write_text("x,y\n1,2\n3,abc\n")
    with pytest.raises(eo.EveryOShapeError, match="line 3, column 2"):
        eo.load_csv_dataset(bad)
    good = tmp_path / "good.csv"
    good.write_text("x,y\n1,2\n")
    with pytest.raises(eo.EveryOShapeError, match="no column named 'z'"):
        eo.load_csv_dataset(good, target_column="z")


def test_dataloader_batches_seeded_shuffles_and_errors():
    def loader():
        return eo.DataLoader(eo.ArrayDataset(X, Y), batch_size=6, shuffle=True, seed=3)

    assert len(loader()) == 4 and [len(b[0]) for b in loader()] == [6, 6, 6, 2]
    assert loader().num_samples == 20
    assert len(eo.DataLoader(eo.ArrayDataset(X), batch_size=6, drop_last=True)) == 3
    first = loader()
    epochs = [np.concatenate([b[0][:, 0].numpy() for b in first]).tolist() for _ in range(2)]
    assert epochs[0] != epochs[1]  # a new permutation each epoch...
    second = loader()
    again = [np.concatenate([b[0][:, 0].numpy() for b in second]).tolist() for _ in range(2)]
    assert again == epochs  # ...and the whole sequence repeats from the seed
    with pytest.raises(ValueError):
        eo.DataLoader(eo.ArrayDataset(X), batch_size=0)
    with pytest.raises(TypeError):
        eo.DataLoader(object())


def test_train_test_split():
    Xtr, Xte, ytr, yte = eo.train_test_split(X, Y, test_size=0.25, seed=0)
    assert Xtr.shape == (15, 2) and Xte.shape == (5, 2) and ytr.shape == (15,)
    assert isinstance(Xtr, np.ndarray)
    rows = sorted(Xtr[:, 0].tolist() + Xte[:, 0].tolist())
    assert rows == X[:, 0].tolist()  # a partition
    assert np.array_equal(Y[(Xte[:, 0] / 2).astype(int)], yte)  # rows stay aligned
    again = eo.train_test_split(X, Y, test_size=0.25, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(again, (Xtr, Xte, ytr, yte)))
    # the test rows are the first of the permutation; without shuffling, the leading rows
    perm = np.random.default_rng(0).permutation(20)
    assert np.array_equal(Xte, X[perm[:5]])
    lead = eo.train_test_split(X, test_size=0.1, shuffle=False)
    assert np.array_equal(lead[1], X[:2]) and np.array_equal(lead[0], X[2:])
    assert len(eo.train_test_split(eo.tensor(X), test_size=0.01)[1]) == 1  # at least one
    assert len(eo.train_test_split(X, test_size=0.99)[0]) == 1  # at most n - 1


@pytest.mark.parametrize("call, error", [
    (lambda: eo.train_test_split(), ValueError),
    (lambda: eo.train_test_split(X, test_size=0.0), ValueError),
    (lambda: eo.train_test_split(X, test_size=5), ValueError),
    (lambda: eo.train_test_split(X, Y[:3]), eo.EveryOShapeError),
    (lambda: eo.train_test_split(X[:1]), eo.EveryOShapeError),
])  # fmt: skip
def test_train_test_split_errors(call, error):
    with pytest.raises(error):
        call()


def test_stratified_split_keeps_class_balance():
    labels = np.repeat([0, 1, 2], [10, 5, 1])
    feats = np.arange(16)
    Xtr, Xte, ytr, yte = eo.stratified_split(feats, labels, test_size=0.2, seed=1)
    assert np.bincount(yte, minlength=3).tolist() == [2, 1, 0]  # the single member stays in train
    assert np.bincount(ytr, minlength=3).tolist() == [8, 4, 1]
    assert np.array_equal(labels[Xte], yte) and np.array_equal(labels[Xtr], ytr)
    one_hot = eo.one_hot_encode(labels)
    _, _, ytr2, yte2 = eo.stratified_split(feats, one_hot, test_size=0.2, seed=1)
    assert ytr2.shape == (13, 3) and yte2.argmax(axis=1).tolist() == yte.tolist()
    with pytest.raises(eo.EveryOShapeError):
        eo.stratified_split(feats, labels[:3])


def test_standard_scaler():
    data = np.array([[1.0, 5.0, 7.0], [3.0, 5.0, 9.0], [5.0, 5.0, 20.0]], dtype=np.float32)
    scaler = eo.StandardScaler()
    assert scaler.fit(data) is scaler
    np.testing.assert_allclose(scaler.mean_, data.mean(axis=0))
    np.testing.assert_allclose(scaler.std_, data.std(axis=0))
    out = scaler.transform(data)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.mean(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(out[:, [0, 2]].std(axis=0), 1, rtol=1e-5)
    assert (out[:, 1] == 0).all()  # a constant column divides by 1e-8, not by zero
    np.testing.assert_allclose(scaler.inverse_transform(out), data, rtol=1e-5)
    assert scaler.fit_transform(eo.tensor(data)).shape == (3, 3)
    assert eo.StandardScaler().fit_transform(data.astype(np.float64)).dtype == np.float64
    assert eo.StandardScaler().fit_transform(np.arange(6).reshape(3, 2)).dtype == np.float32
    with pytest.raises(eo.EveryOShapeError, match="before fit"):
        eo.StandardScaler().transform(data)
    with pytest.raises(eo.EveryOShapeError):
        scaler.transform(data[:, :2])


def test_min_max_scaler():
    data = np.array([[0.0, 10.0], [5.0, 20.0], [10.0, 30.0]])
    out = eo.MinMaxScaler(feature_range=(-1, 1)).fit_transform(data)
    assert out.tolist() == [[-1.0, -1.0], [0.0, 0.0], [1.0, 1.0]]
    assert not hasattr(eo.MinMaxScaler(), "inverse_transform")
    with pytest.raises(ValueError):
        eo.MinMaxScaler(feature_range=(1, 1))
    with pytest.raises(eo.EveryOShapeError):
        eo.MinMaxScaler().transform(data)


def test_standardize_and_one_hot_encode():
    data = np.array([[1.0, 2.0], [3.0, 2.0]])
    assert eo.standardize(data).tolist() == [[-1.0, 0.0], [1.0, 0.0]]
    assert eo.standardize(data, axis=1).tolist() == [[-1.0, 1.0], [1.0, -1.0]]
    enc = eo.one_hot_encode(np.array([[2], [0]]))
    assert enc.dtype == np.float32 and enc.tolist() == [[0, 0, 1], [1, 0, 0]]
    assert eo.one_hot_encode([1], num_classes=4).shape == (1, 4)
    assert eo.one_hot_encode([]).shape == (0, 0)
    assert eo.one_hot_encode([], num_classes=3).shape == (0, 3)
    with pytest.raises(eo.EveryOShapeError):
        eo.one_hot_encode([-1, 0])
    with pytest.raises(eo.EveryOShapeError):
        eo.one_hot_encode([3], num_classes=3)
    assert isinstance(eo.one_hot(eo.tensor([1]), 3), eo.Tensor)  # the PyTorch-style one


def test_reference_keywords_and_non_numeric_data():
    parts = eo.random_split(eo.ArrayDataset(X), fractions=[0.5, 0.5], seed=1)
    assert [len(p) for p in parts] == [10, 10]
    with pytest.raises(eo.EveryOShapeError, match="objects"):
        eo.ArrayDataset(np.array([{"a": 1}, {"b": 2}], dtype=object))
    with pytest.raises(eo.EveryOShapeError, match="objects"):
        eo.ArrayDataset(X[:2], np.array(["x", None], dtype=object))
