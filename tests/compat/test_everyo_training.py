"""Reference EveryO §6 (training): Trainer, History, callbacks, loggers and metrics."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

import everyo as eo

RNG = np.random.default_rng(0)
XS = RNG.standard_normal((64, 2)).astype(np.float32)
YS = (XS[:, 0] + XS[:, 1] > 0).astype(np.int64)


def _trainer(**kw):
    model = eo.Sequential(eo.Linear(2, 8, seed=0), eo.ReLU(), eo.Linear(8, 2, seed=1))
    return eo.Trainer(model, eo.Adam(model.parameters(), lr=0.05), eo.CrossEntropyLoss(), **kw)


def _loader(shuffle=True):
    return eo.DataLoader(eo.ArrayDataset(XS, YS), batch_size=16, shuffle=shuffle, seed=0)


def test_fit_with_reference_keywords(capsys):
    trainer = _trainer(metrics=["Accuracy"], gradient_clip=1.0)
    assert trainer.grad_clip == trainer.gradient_clip == 1.0
    history = trainer.fit(_loader(), epochs=4, validation_loader=_loader(False), verbose=True,
                          log_every=2)  # fmt: skip
    assert history is trainer.history and len(history) == 4
    assert history["epoch"] == [1, 2, 3, 4]
    assert history["loss"][-1] < history["loss"][0]
    assert {"accuracy", "val_loss", "val_accuracy"} <= set(history.keys())
    lines = capsys.readouterr().out.splitlines()
    # every 2nd epoch plus the first and the last, then the total time
    assert [ln.split(" | ")[0] for ln in lines[:-1]] == ["epoch 1/4", "epoch 2/4", "epoch 4/4"]
    assert "loss=" in lines[0] and "val_accuracy=" in lines[0] and lines[0].endswith("s")
    assert lines[-1].startswith("training finished in")
    assert trainer.fit(_loader(), epochs=1, verbose=False) is history and len(history) == 5
    assert capsys.readouterr().out == ""


def test_default_epochs_and_metric_names():
    trainer = _trainer(metrics=["mse", "R2", "mae"])
    onehot = eo.one_hot_encode(YS, 2)
    loader = eo.DataLoader(eo.ArrayDataset(XS, onehot), batch_size=32)
    trainer.loss_fn = eo.MSELoss()
    history = trainer.fit(loader, verbose=False)
    assert len(history) == 10  # epochs=10 by default
    assert {"mse", "r2", "mae"} <= set(history.keys())
    assert history.last["r2"] <= 1.0


@pytest.mark.parametrize("kw, error", [
    ({"gradient_clip": 0.0}, ValueError),
    ({"metrics": ["f1"]}, ValueError),
    ({"metrics": [3]}, TypeError),
])  # fmt: skip
def test_trainer_construction_errors(kw, error):
    with pytest.raises(error):
        _trainer(**kw)


def test_trainer_rejects_bad_models_losses_epochs_and_callbacks():
    model = eo.Linear(2, 2)
    with pytest.raises(TypeError):
        eo.Trainer(object(), eo.SGD(model.parameters()), eo.MSELoss())
    with pytest.raises(TypeError):
        eo.Trainer(model, eo.SGD(model.parameters()), "mse")
    with pytest.raises(TypeError, match="optimizer"):
        eo.Trainer(model, object(), eo.MSELoss())
    with pytest.raises(ValueError):
        _trainer().fit(_loader(), epochs=0)
    with pytest.raises(TypeError):
        _trainer().fit(_loader(), epochs=1, callbacks=[object()], verbose=False)


def test_callback_hooks_order_and_arguments():
    seen = []

    class Recorder(eo.Callback):
        def on_train_begin(self, trainer):
            seen.append("train_begin")

        def on_epoch_begin(self, trainer, epoch):
            seen.append(("epoch_begin", epoch))

        def on_batch_begin(self, trainer, batch):
            seen.append(("batch_begin", batch))

        def on_batch_end(self, trainer, batch, logs):
            seen.append(("batch_end", isinstance(logs["loss"], float)))

        def on_epoch_end(self, trainer, epoch, logs):
            seen.append(("epoch_end", epoch, "loss" in logs))
            if epoch == 2:
                trainer.stop_training = True

        def on_train_end(self, trainer):
            seen.append("train_end")

    from everyo.training.callbacks import CallbackList

    _trainer().fit(_loader(), epochs=5, callbacks=[CallbackList([Recorder()])], verbose=False)
    epoch1 = seen[: seen.index(("epoch_end", 1, True))]
    assert epoch1[:3] == ["train_begin", ("epoch_begin", 1), ("batch_begin", 0)]
    assert epoch1[2:] == [("batch_begin", 0), ("batch_end", True), ("batch_begin", 1),
                          ("batch_end", True), ("batch_begin", 2), ("batch_end", True),
                          ("batch_begin", 3), ("batch_end", True)]  # fmt: skip
    assert seen.count(("batch_end", True)) == 8
    assert [s for s in seen if s[0] == "epoch_end"] == [("epoch_end", 1, True),
                                                         ("epoch_end", 2, True)]  # fmt: skip
    assert seen[-1] == "train_end"


def _script_losses(values):
    """A trainer whose epoch losses are ``values`` (a callback overwrites the logs)."""

    class Scripted(eo.Callback):
        def on_epoch_end(self, trainer, epoch, logs):
            logs["val_loss"] = values[epoch - 1]

    return Scripted()


def test_early_stopping_and_its_documented_difference(capsys):
    values = [1.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    stop = eo.EarlyStopping(monitor="val_loss", patience=2, mode="min",
                            restore_best_weights=True, verbose=True)  # fmt: skip
    trainer = _trainer()
    trainer.fit(_loader(), epochs=7, callbacks=[_script_losses(values), stop], verbose=False)
    # everyo stops at the patience-th epoch without improvement (Keras; the reference stops
    # one epoch later): best at epoch 2, stopped at epoch 4
    assert (stop.best, stop.best_epoch, stop.stopped_epoch) == (0.5, 2, 4)
    assert "EarlyStopping" in capsys.readouterr().out
    with pytest.raises(ValueError):
        eo.EarlyStopping(mode="sideways")
    with pytest.raises(ValueError):
        eo.EarlyStopping(patience=-1)


def test_model_checkpoint_records_epochs_and_metadata(tmp_path):
    path = tmp_path / "best.eo"
    ckpt = eo.ModelCheckpoint(path, monitor="val_loss", mode="min", save_best_only=True)
    values = [1.0, 0.5, 0.7, 0.4]
    _trainer().fit(_loader(), epochs=4, callbacks=[_script_losses(values), ckpt], verbose=False)
    assert ckpt.saved_epochs == [1, 2, 4]
    info = eo.inspect_archive(path)
    assert info["metadata"]["epoch"] == 4 and info["metadata"]["val_loss"] == 0.4
    plain = eo.ModelCheckpoint(tmp_path / "last", save_best_only=False)
    _trainer().fit(_loader(), epochs=1, callbacks=[plain], verbose=False)
    assert plain.saved == [str(tmp_path / "last.evo")] and plain.saved_epochs == [1]
    with pytest.raises(ValueError):
        eo.ModelCheckpoint(path, mode="up")


def test_learning_rate_scheduler_reference_form():
    seen = []

    def schedule(epoch, lr):
        seen.append((epoch, lr))
        return lr * 0.5

    trainer = _trainer()
    trainer.optimizer.lr = 0.08
    trainer.fit(_loader(), epochs=3, callbacks=[eo.LearningRateScheduler(schedule)],
                verbose=False)  # fmt: skip
    assert seen == [(1, 0.08), (2, 0.04), (3, 0.02)]  # 1-based epochs, at epoch begin
    assert trainer.optimizer.lr == 0.01
    with pytest.raises(TypeError):
        eo.LearningRateScheduler(0.1)
    with pytest.raises(ValueError):
        _trainer().fit(_loader(), epochs=1, verbose=False,
                       callbacks=[eo.LearningRateScheduler(lambda epoch, lr: 0.0)])  # fmt: skip


def test_progress_logger_stream_and_silence():
    out = io.StringIO()
    _trainer().fit(_loader(), epochs=3, callbacks=[eo.ProgressLogger(every=5, stream=out)],
                   progress=False)  # fmt: skip
    heads = [ln.split(" | ")[0] for ln in out.getvalue().splitlines()]
    assert heads == ["epoch 1/3", "epoch 3/3", heads[-1]] and heads[-1].startswith("training")
    cells = out.getvalue().splitlines()[0].split(" | ")
    assert cells[1].startswith("loss=") and len(cells[1].split(".")[1]) == 4  # 4 decimals
    quiet = eo.ProgressLogger(stream=False)
    _trainer().fit(_loader(), epochs=1, callbacks=[quiet], progress=False)  # prints nothing


def test_csv_logger_rewrites_the_whole_history(tmp_path, capsys):
    path = tmp_path / "logs" / "history.csv"
    seen = []

    class Peek(eo.Callback):
        def on_epoch_end(self, trainer, epoch, logs):
            with open(path) as fh:
                seen.append(len(list(csv.DictReader(fh))))

    trainer = _trainer(metrics=["accuracy"])
    trainer.fit(_loader(), epochs=3, callbacks=[eo.CSVLogger(path), Peek()], verbose=False)
    assert seen == [1, 2, 3]
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:3] == ["epoch", "loss", "accuracy"]
    assert [float(r["loss"]) for r in rows] == pytest.approx(trainer.history["loss"])


def test_history_lookups_and_export(tmp_path):
    trainer = _trainer()
    history = trainer.fit(_loader(), epochs=3, validation_loader=_loader(False), verbose=False)
    assert "val_loss" in history and "nope" not in history
    assert history.get("nope", 5) == 5
    with pytest.raises(KeyError):
        history["nope"]
    best = history.best("val_loss")
    assert best["val_loss"] == min(history["val_loss"])
    assert history.best("val_loss", mode="max")["val_loss"] == max(history["val_loss"])
    assert history.to_dict()["loss"] == history["loss"]
    assert history.to_json(tmp_path / "h" / "h.json").exists()
    assert [rec["epoch"] for rec in history] == [1, 2, 3]


def test_evaluate_predict_and_predict_classes():
    trainer = _trainer()
    trainer.fit(_loader(), epochs=5, verbose=False)
    result = trainer.evaluate(_loader(False))
    assert set(result) == {"loss"} and trainer.model.training
    out = trainer.predict(XS, batch_size=10)
    assert out.shape == (64, 2)
    classes = trainer.predict_classes(XS)
    assert classes.dtype == np.int64 and np.array_equal(classes, out.numpy().argmax(axis=1))
    assert eo.accuracy(classes, YS) > 0.8


def test_accuracy_and_confusion_matrix():
    scores = np.array([[0.9, 0.1], [0.2, 0.8], [0.3, 0.7], [0.6, 0.4]])
    target = np.array([0, 1, 0, 0])
    assert eo.accuracy(scores, target) == 0.75
    assert eo.accuracy(eo.tensor(scores), eo.one_hot_encode(target, 2)) == 0.75
    assert eo.accuracy(np.array([1, 0]), np.array([[1], [1]])) == 0.5
    assert eo.accuracy(np.zeros(0), np.zeros(0)) == 0.0
    with pytest.raises(eo.EveryOShapeError):
        eo.accuracy(np.array([1, 0, 1]), np.array([1, 0]))
    cm = eo.confusion_matrix(scores, target)
    assert cm.dtype == np.int64 and cm.tolist() == [[2, 1], [0, 1]]  # rows: true class
    assert eo.confusion_matrix([2], [0], num_classes=4).shape == (4, 4)
    with pytest.raises(IndexError):
        eo.confusion_matrix([5], [0], num_classes=3)


def test_sum_reduction_losses_are_batch_totals():
    # a model that cannot learn (lr tiny) on fixed data: the epoch loss is the per-sample mean
    # whatever the reduction, when the batch value of a "sum" loss counts as the batch's total
    def run(reduction):
        model = eo.Sequential(eo.Linear(2, 1, seed=0))
        trainer = eo.Trainer(model, eo.SGD(model.parameters(), lr=1e-12),
                             eo.MSELoss(reduction=reduction))  # fmt: skip
        loader = eo.DataLoader(eo.ArrayDataset(XS, YS.reshape(-1, 1).astype(np.float32)), 10)
        trainer.fit(loader, epochs=1, verbose=False)
        return trainer.history.last["loss"], trainer.evaluate(loader)["loss"]

    mean, total = run("mean"), run("sum")
    assert total == pytest.approx(mean, rel=1e-5)


def test_empty_loaders_are_errors():
    empty = eo.DataLoader(eo.ArrayDataset(XS[:3], YS[:3]), batch_size=4, drop_last=True)
    with pytest.raises(eo.EveryOError, match="no batches"):
        _trainer().fit(empty, epochs=1, verbose=False)
    with pytest.raises(eo.EveryOError, match="no batches"):
        _trainer().evaluate(empty)


def test_history_reference_construction_and_append():
    history = eo.History([{"epoch": 1, "loss": 0.5}])
    row = history.append(epoch=2, loss=0.25)
    assert row == {"epoch": 2, "loss": 0.25} and history["loss"] == [0.5, 0.25]
    assert len(history) == 2 and history.best("loss")["epoch"] == 2


def test_history_keys_and_last_in_both_spellings():
    history = eo.History()
    with pytest.raises(IndexError):
        history.last()
    history.append(epoch=1, loss=0.5)
    history.append(epoch=2, loss=0.25, val_loss=0.3)
    assert history.keys == ["epoch", "loss", "val_loss"]  # reference: a property
    assert history.keys() == ["epoch", "loss", "val_loss"]  # everyo: a method
    assert "val_loss" in history.keys
    assert history.last()["loss"] == history.last["loss"] == 0.25
    assert history.last() is history.last and history.last == {"epoch": 2, "loss": 0.25,
                                                               "val_loss": 0.3}  # fmt: skip


def test_metric_functions_written_with_numpy():
    def mean_abs(pred, target):
        return float(np.mean(np.abs(pred - target.reshape(pred.shape))))

    model = eo.Sequential(eo.Linear(2, 1, seed=0))
    trainer = eo.Trainer(model, eo.SGD(model.parameters(), lr=1e-12), eo.MSELoss(),
                         metrics=[mean_abs, "mae"])  # fmt: skip
    loader = eo.DataLoader(eo.ArrayDataset(XS, YS.reshape(-1, 1).astype(np.float32)), 16)
    trainer.fit(loader, epochs=1, verbose=False)
    assert trainer.history.last["mean_abs"] == pytest.approx(trainer.history.last["mae"])
    assert trainer.evaluate(loader)["mean_abs"] == pytest.approx(trainer.history.last["mae"])
