"""Trainer: convergence (MLP on blobs, CNN on digits, Transformer encoder on a toy sequence
task), History records, evaluate/predict, accumulation, clipping, mixed precision, callbacks,
profiler regions."""

from __future__ import annotations

import numpy as np
import pytest
from test_nn_module import profiling

import everyo as eo
from everyo.datasets import make_blobs, make_digits
from everyo.nn.utils import clip_grad_norm_, clip_grad_value_
from everyo.serialization import load


def _blobs(n=600, seed=0):
    X, y = make_blobs(n, n_features=4, centers=3, cluster_std=1.5, seed=seed)
    return eo.ArrayDataset(X, y)


def _mlp(seed=0):
    return eo.Sequential(eo.Linear(4, 32, seed=seed), eo.ReLU(), eo.Linear(32, 3, seed=seed + 1))


def test_mlp_reaches_95_percent_on_blobs():
    train, val = _blobs(600, 0), _blobs(300, 0)
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.Adam(model.parameters(), lr=0.01),
                         eo.CrossEntropyLoss(), metrics=["accuracy"])  # fmt: skip
    history = trainer.fit(eo.DataLoader(train, 32, shuffle=True, seed=0), epochs=5,
                          val_loader=eo.DataLoader(val, 128), progress=False)  # fmt: skip
    assert len(history) == 5
    assert history.last["accuracy"] >= 0.95 and history.last["val_accuracy"] >= 0.95
    assert history["loss"][-1] < history["loss"][0]


def test_history_records_throughput_figures():
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.1), eo.CrossEntropyLoss())
    history = trainer.fit(eo.DataLoader(_blobs(100), 32), epochs=2,
                          val_loader=eo.DataLoader(_blobs(50), 25), progress=False)  # fmt: skip
    rec = history.last
    for key in ("epoch", "loss", "lr", "samples", "samples_per_s", "epoch_time_s",
                "mean_batch_time_ms", "val_loss", "val_time_s", "peak_host_mib"):  # fmt: skip
        assert key in rec, key
    assert rec["samples"] == 100 and rec["epoch"] == 2 and rec["samples_per_s"] > 0
    assert rec["peak_host_mib"] > 1
    assert history["epoch"] == [1, 2] and "2 epochs" in repr(history)
    with pytest.raises(KeyError, match="accuracy"):
        history["accuracy"]


def test_small_cnn_learns_digits():
    X, y = make_digits(480, size=12, seed=0)
    Xv, yv = make_digits(200, size=12, seed=1)
    model = eo.Sequential(
        eo.Conv2d(1, 8, 3, padding=1, seed=0), eo.ReLU(), eo.MaxPool2d(2),
        eo.Conv2d(8, 16, 3, padding=1, seed=1), eo.ReLU(), eo.MaxPool2d(2),
        eo.Flatten(), eo.Linear(16 * 3 * 3, 10, seed=2),
    )  # fmt: skip
    trainer = eo.Trainer(model, eo.optim.Adam(model.parameters(), lr=0.01),
                         eo.CrossEntropyLoss(), metrics=["accuracy"])  # fmt: skip
    trainer.fit(eo.DataLoader(eo.ArrayDataset(X, y), 32, shuffle=True, seed=0), epochs=5,
                progress=False)  # fmt: skip
    assert trainer.evaluate(eo.DataLoader(eo.ArrayDataset(Xv, yv), 100))["accuracy"] >= 0.9


class SeqClassifier(eo.Module):
    def __init__(self, vocab=6, length=5, d=16):
        super().__init__()
        self.embed = eo.Embedding(vocab, d, seed=0)
        self.pos = eo.nn.Parameter(eo.randn(1, length, d, seed=1) * 0.1)
        self.encoder = eo.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True,
                                                  seed=2)  # fmt: skip
        self.head = eo.Linear(d, vocab, seed=3)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens) + self.pos)
        return self.head(h.mean(axis=1))


def test_tiny_transformer_fits_max_token_task():
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 6, size=(512, 5))
    labels = tokens.max(axis=1)  # needs every position: the attention has to mix them
    model = SeqClassifier()
    trainer = eo.Trainer(model, eo.optim.Adam(model.parameters(), lr=0.01),
                         eo.CrossEntropyLoss(), metrics=["accuracy"])  # fmt: skip
    loader = eo.DataLoader(eo.ArrayDataset(tokens, labels), 32, shuffle=True, seed=0)
    history = trainer.fit(loader, epochs=12, progress=False)
    assert history.last["accuracy"] >= 0.9


def test_evaluate_and_predict_restore_mode():
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.1), eo.CrossEntropyLoss(),
                         metrics=["accuracy"])  # fmt: skip
    loader = eo.DataLoader(_blobs(64), 16)
    assert model.training
    result = trainer.evaluate(loader)
    assert model.training and set(result) == {"loss", "accuracy"}
    model.eval()
    trainer.evaluate(loader)
    assert not model.training
    model.train()
    preds = trainer.predict(loader)
    assert preds.shape == (64, 3) and model.training and not preds.requires_grad
    direct = trainer.predict(_blobs(64).features)
    np.testing.assert_allclose(direct.numpy(), preds.numpy(), rtol=1e-6)


def test_gradient_accumulation_matches_one_big_batch():
    ds = _blobs(20)

    def trained(batch, accumulate):
        model = _mlp(3)
        trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.5),
                             eo.CrossEntropyLoss(), accumulate_steps=accumulate)  # fmt: skip
        trainer.fit(eo.DataLoader(ds, batch), epochs=1, progress=False)
        return model, trainer

    big, t_big = trained(10, 1)
    small, t_small = trained(5, 2)
    assert t_big.global_step == 2 and t_small.global_step == 2
    for a, b in zip(big.parameters(), small.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    _, t_odd = trained(5, 3)  # 4 batches: a step after 3 and a flush of the last one
    assert t_odd.global_step == 2


def test_train_step_by_hand_matches_fit_with_accumulation():
    ds = _blobs(20)
    via_fit = _mlp(3)
    eo.Trainer(via_fit, eo.optim.SGD(via_fit.parameters(), lr=0.5), eo.CrossEntropyLoss(),
               accumulate_steps=2).fit(eo.DataLoader(ds, 5), epochs=1, progress=False)  # fmt: skip
    by_hand = _mlp(3)
    trainer = eo.Trainer(by_hand, eo.optim.SGD(by_hand.parameters(), lr=0.5),
                         eo.CrossEntropyLoss(), accumulate_steps=2)  # fmt: skip
    before = [p.numpy() for p in by_hand.parameters()]
    batches = list(eo.DataLoader(ds, 5))
    loss = trainer.train_step(batches[0])
    assert loss.shape == () and loss.item() > 0
    # the first of two accumulated steps leaves the weights alone
    for p, b in zip(by_hand.parameters(), before):
        np.testing.assert_array_equal(p.numpy(), b)
    for batch in batches[1:]:
        trainer.train_step(batch)
    assert trainer.global_step == 2
    for a, b in zip(via_fit.parameters(), by_hand.parameters()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_and_value():
    a = eo.nn.Parameter(eo.zeros(2))
    b = eo.nn.Parameter(eo.zeros(1))
    a.grad, b.grad = eo.tensor([3.0, 0.0]), eo.tensor([4.0])
    norm = clip_grad_norm_([a, b], 1.0)
    assert norm == pytest.approx(5.0)
    total = np.sqrt((a.grad.numpy() ** 2).sum() + (b.grad.numpy() ** 2).sum())
    assert total == pytest.approx(1.0, rel=1e-5)
    assert clip_grad_norm_([a, b], 10.0) == pytest.approx(1.0, rel=1e-5)  # below: unchanged
    clip_grad_value_([a], 0.1)
    assert a.grad.numpy().max() <= 0.1


def test_trainer_grad_clip_bounds_the_update():
    model = eo.Sequential(eo.Linear(4, 3, seed=0))
    before = model[0].weight.numpy()
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=1.0), eo.MSELoss(),
                         grad_clip=0.01)  # fmt: skip
    X = np.full((8, 4), 100.0, np.float32)
    loader = eo.DataLoader(eo.ArrayDataset(X, np.zeros((8, 3), np.float32)), 8)
    trainer.fit(loader, epochs=1, progress=False)
    step = np.sqrt(((model[0].weight.numpy() - before) ** 2).sum())
    assert step <= 0.0101


def test_mixed_precision_trains_with_grad_scaler():
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.Adam(model.parameters(), lr=0.01),
                         eo.CrossEntropyLoss(), metrics=["accuracy"], autocast="float16",
                         grad_clip=5.0)  # fmt: skip
    assert trainer.scaler is not None
    history = trainer.fit(eo.DataLoader(_blobs(300), 32, shuffle=True, seed=0), epochs=4,
                          progress=False)  # fmt: skip
    assert model[0].weight.dtype == np.float32  # master weights stay float32
    assert history.last["accuracy"] >= 0.9


def test_callbacks_early_stopping_checkpoint_and_lr_schedule(tmp_path):
    model = _mlp()
    opt = eo.optim.SGD(model.parameters(), lr=0.0)  # nothing improves: early stop
    stop = eo.EarlyStopping(monitor="loss", patience=2)
    ckpt = eo.ModelCheckpoint(tmp_path / "best-{epoch}.eo", monitor="loss")
    trainer = eo.Trainer(model, opt, eo.CrossEntropyLoss())
    history = trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=10, callbacks=[stop, ckpt],
                          progress=False)  # fmt: skip
    assert len(history) == 3 and stop.stopped_epoch == 3
    assert ckpt.saved == [str(tmp_path / "best-1.eo")]
    load(ckpt.saved[0], model=_mlp(9))

    model = _mlp()
    opt = eo.optim.SGD(model.parameters(), lr=1.0)
    sched = eo.LearningRateScheduler(eo.optim.StepLR(opt, step_size=1, gamma=0.5))
    trainer = eo.Trainer(model, opt, eo.CrossEntropyLoss())
    history = trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=3, callbacks=[sched],
                          progress=False)  # fmt: skip
    assert history["lr"] == [1.0, 0.5, 0.25]
    fn = eo.LearningRateScheduler(lambda epoch: 0.1 / (epoch + 1))
    history = trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=2, callbacks=[fn],
                          progress=False)  # fmt: skip
    assert history["lr"][-2:] == pytest.approx([0.1, 0.05])


def test_learning_rate_scheduler_per_step_visits_every_step_index():
    model = _mlp()
    opt = eo.optim.SGD(model.parameters(), lr=1.0)
    used = []

    class Record(eo.Callback):
        def on_batch_end(self, trainer, step, logs):
            used.append(opt.param_groups[0]["lr"])

    sched = eo.LearningRateScheduler(lambda step: 1.0 / (step + 1), interval="step")
    trainer = eo.Trainer(model, opt, eo.CrossEntropyLoss())
    trainer.fit(eo.DataLoader(_blobs(40), 10), epochs=2, callbacks=[Record(), sched],
                progress=False)  # fmt: skip
    # the rate each step ran with: step i (0-based) used schedule(i)
    assert used == pytest.approx([1.0 / (i + 1) for i in range(8)])


def test_early_stopping_restores_best_weights_and_needs_val():
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.0), eo.CrossEntropyLoss())
    with pytest.raises(eo.EveryOConfigError, match="val_loader"):
        trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=2, callbacks=[eo.EarlyStopping()],
                    progress=False)  # fmt: skip
    stop = eo.EarlyStopping(monitor="val_loss", patience=1, restore_best_weights=True)
    before = model[0].weight.numpy()
    trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=3, val_loader=eo.DataLoader(_blobs(20), 20),
                callbacks=[stop], progress=False)  # fmt: skip
    np.testing.assert_array_equal(model[0].weight.numpy(), before)


def test_profiler_sees_training_phases():
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.1), eo.CrossEntropyLoss())
    with profiling() as p:
        trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=1, progress=False)
    train = [n for n, k, _ in p.regions if k == "train"]
    assert train[:5] == ["data", "forward", "loss", "backward", "optimizer"]
    assert train.count("forward") == 2 and train.count("data") == 3  # the last one ends the epoch
    kinds = {(n, k) for n, k, _ in p.regions}
    assert ("DataLoader.next", "data") in kinds and ("SGD.step", "optimizer") in kinds
    assert p.modules.count("Sequential") == 2 and "CrossEntropyLoss" in p.modules


def test_progress_bar_and_errors(capsys):
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.1), eo.CrossEntropyLoss())
    trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=1, progress=True)
    assert "epoch 1/1" in capsys.readouterr().err
    with pytest.raises(eo.EveryOConfigError, match="targets"):
        trainer.fit(eo.DataLoader(eo.ArrayDataset(np.zeros((4, 4), np.float32)), 2), epochs=1,
                    progress=False)  # fmt: skip
    with pytest.raises(eo.EveryOConfigError, match="epochs"):
        trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=0)
    with pytest.raises(eo.EveryOConfigError, match="accumulate_steps"):
        eo.Trainer(model, eo.optim.SGD(model.parameters()), eo.MSELoss(), accumulate_steps=0)
    with pytest.raises(eo.EveryOConfigError, match="unknown metric"):
        eo.Trainer(model, eo.optim.SGD(model.parameters()), eo.MSELoss(), metrics=["f1"])
    with pytest.raises(TypeError, match="Callback"):
        trainer.fit(eo.DataLoader(_blobs(40), 20), epochs=1, callbacks=[print], progress=False)


def test_trainer_runs_on_device(device_name):
    model = _mlp()
    trainer = eo.Trainer(model, eo.optim.Adam(model.parameters(), lr=0.01), eo.CrossEntropyLoss(),
                         metrics=["accuracy"], device=device_name)  # fmt: skip
    assert str(model[0].weight.device).startswith(device_name)
    history = trainer.fit(eo.DataLoader(_blobs(200), 50), epochs=2, progress=False,
                          val_loader=eo.DataLoader(_blobs(100), 50))  # fmt: skip
    assert history.last["val_accuracy"] > 0.5
    if device_name == "cuda":
        assert "peak_device_mib" in history.last
    assert str(trainer.predict(_blobs(10).features).device).startswith(device_name)


class _Batches:
    """A loader without ``__len__``: the trainer flushes a partial accumulation at the end."""

    def __init__(self, loader):
        self.loader = loader

    def __iter__(self):
        return iter(self.loader)


@pytest.mark.parametrize("sized", [True, False])
def test_step_interval_scheduler_steps_once_per_optimizer_step(sized):
    """8 batches with accumulate_steps=4 are 2 optimizer steps: StepLR(step_size=1, gamma=0.5)
    halves the rate twice, and each optimizer step runs with the rate of its own index."""
    model = _mlp()
    opt = eo.optim.SGD(model.parameters(), lr=1.0)
    used = []
    step = opt.step

    def spy(*args, **kwargs):
        used.append(opt.param_groups[0]["lr"])
        return step(*args, **kwargs)

    opt.step = spy
    sched = eo.LearningRateScheduler(eo.optim.StepLR(opt, step_size=1, gamma=0.5), "step")
    trainer = eo.Trainer(model, opt, eo.CrossEntropyLoss(), accumulate_steps=4)
    loader = eo.DataLoader(_blobs(40), 5)  # 8 batches
    if not sized:  # 6 batches: one full accumulation and a flushed partial one
        loader = _Batches(eo.DataLoader(_blobs(30), 5))
    trainer.fit(loader, epochs=1, callbacks=[sched], progress=False)
    assert trainer.global_step == 2 and used == [1.0, 0.5]
    assert sched.schedule.last_epoch == 2 and opt.param_groups[0]["lr"] == 0.25
    trainer.fit(loader, epochs=1, callbacks=[sched], progress=False)  # fit again: continues
    assert trainer.global_step == 4 and used == [1.0, 0.5, 0.25, 0.125]
