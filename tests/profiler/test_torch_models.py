"""Real models no one here wrote, profiled with no change to their code (issue 42).

Hugging Face GPT-2 and a BERT classifier from tiny configs on random weights (no download),
``nn.TransformerEncoder``, an ``nn.LSTM`` model and a training loop shaped like PyTorch's MNIST
example (a DataLoader over a synthetic dataset with two worker processes): each shows the
module tree of ``named_modules()``, a backward event per parameterised module, optimizer steps
and (the loop) data waits, and its Chrome trace nests exactly.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402
from torch_checks import (  # noqa: E402
    backward_groups,
    check_module_tree,
    parameterised_paths,
)
from trace_nesting import assert_trace_nests  # noqa: E402

import everyo.profiler as ep  # noqa: E402


def _profile_training(model, batch, loss_of, registry, steps=2, tmp_path=None):
    torch.manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with ep.profile(registry=registry) as p:
        for _ in range(steps):
            opt.zero_grad()
            loss = loss_of(model, batch)
            loss.backward()
            opt.step()
    events = p.events
    seen = check_module_tree(events, model)
    groups = backward_groups(events)
    expected = parameterised_paths(model)
    assert {g.path for g in groups} == expected
    # one group per parameterised module per step
    assert len(groups) == steps * len(expected)
    assert [e.name for e in events if e.kind == "optimizer"] == ["AdamW.step"] * steps
    if tmp_path is not None:
        assert_trace_nests(p.export_chrome_trace(tmp_path / "trace.json"))
    return seen, events


def test_gpt2(registry, tmp_path):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(
        n_layer=2,
        n_embd=32,
        n_head=2,
        vocab_size=100,
        n_positions=16,
        bos_token_id=0,
        eos_token_id=0,
    )
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 100, (2, 8))
    seen, events = _profile_training(
        model, ids, lambda m, x: m(x, labels=x).loss, registry, tmp_path=tmp_path
    )
    assert {
        "",
        "transformer",
        "transformer.h.1.attn",
        "transformer.h.0.mlp.c_fc",
        "lm_head",
    } <= seen
    # lm_head shares wte's weight: its gradient is accumulated once, in wte's group
    assert "transformer.wte" in {g.path for g in backward_groups(events)}


def test_bert_classifier(registry, tmp_path):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=3,
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(cfg)
    ids = torch.randint(0, 100, (2, 8))
    labels = torch.tensor([0, 2])
    seen, _ = _profile_training(
        model,
        ids,
        lambda m, x: m(input_ids=x, labels=labels).loss,
        registry,
        tmp_path=tmp_path,
    )
    assert {"bert.encoder.layer.1.attention.self.query", "bert.pooler.dense", "classifier"} <= seen


def test_transformer_encoder(registry, tmp_path):
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
    x = torch.randn(2, 5, 16)
    seen, _ = _profile_training(
        model, x, lambda m, b: m(b).pow(2).mean(), registry, tmp_path=tmp_path
    )
    assert {"layers.0.self_attn", "layers.1.linear2", "layers.1.norm1"} <= seen


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.out = nn.Linear(16, 4)

    def forward(self, ids):
        h, _ = self.lstm(self.embed(ids))
        return self.out(h)


def test_lstm(registry, tmp_path):
    model = LSTMTagger()
    ids = torch.randint(0, 50, (3, 7))
    target = torch.randint(0, 4, (3 * 7,))
    seen, _ = _profile_training(
        model,
        ids,
        lambda m, x: nn.functional.cross_entropy(m(x).reshape(-1, 4), target),
        registry,
        tmp_path=tmp_path,
    )
    assert seen == {"", "embed", "lstm", "out"}


class MnistNet(nn.Module):
    """The model of PyTorch's examples/mnist, smaller."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.fc1 = nn.Linear(8 * 5 * 5, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = nn.functional.relu(self.conv1(x))
        x = nn.functional.max_pool2d(nn.functional.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout1(x), 1)
        return nn.functional.log_softmax(self.fc2(nn.functional.relu(self.fc1(x))), dim=1)


def test_mnist_shaped_loop_with_workers(registry, tmp_path):
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 1, 14, 14), torch.randint(0, 10, (64,)))
    loader = DataLoader(data, batch_size=16, shuffle=True, num_workers=2)
    model = MnistNet()
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
    with ep.profile(registry=registry) as p:
        for _epoch in range(1):
            model.train()
            for x, y in loader:
                opt.zero_grad()
                loss = nn.functional.nll_loss(model(x), y)
                loss.backward()
                opt.step()
            sched.step()
    events = p.events
    assert check_module_tree(events, model) == {"", "conv1", "conv2", "dropout1", "fc1", "fc2"}
    groups = backward_groups(events)
    assert {g.path for g in groups} == {"conv1", "conv2", "fc1", "fc2"}
    assert len(groups) == 4 * 4
    assert [e.name for e in events if e.kind == "optimizer"] == ["Adadelta.step"] * 4
    waits = [e for e in events if e.kind == "data"]
    assert len(waits) == 5 and all(e.name == "DataLoader.next" for e in waits)
    assert all(e.depth == 0 for e in waits)
    assert [e.name for e in events if e.name == "StepLR.step"] == ["StepLR.step"]
    assert_trace_nests(p.export_chrome_trace(tmp_path / "mnist.json"))
