# %% [markdown]
# # Lab 09: profiling a PyTorch model
#
# **Goal:** profile a PyTorch text classifier's training loop with no change to its code, find
# its hot layer and fix it (≥ 3× faster, same outputs and gradients), find the data-loading
# stall that the fix uncovers and remove it (≥ 3× less waiting, same batches), and prove the
# result with a comparison of the two runs and a batch-size sweep.
#
# **Time:** about 45 minutes. **Prerequisites:** labs 01 and 04; PyTorch installed
# (`pip install "everyo[torch]"`, the CPU build is enough).
#
# **Guide sections:** Profiling a Neural Network, Bottleneck Analysis, DataLoader Performance,
# Batch Size Optimization, Training Throughput.
#
# Everything in the earlier labs works on PyTorch models as they are: when `torch` is imported,
# `%%everyo_profile` records every `nn.Module` call (forward, and backward per layer), optimizer
# steps and each wait for a `DataLoader` batch, in the same dashboard, table and comparisons.

# %%
import re

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

import everyo_lab
from everyo.bench import measure_training
from everyo.machine_state import worst
from everyo.profiler import analysis, runs
from everyo.profiler.analysis import names
from everyo_lab.labs import interleaved, start_lab

%load_ext everyo_lab

lab = start_lab("09_pytorch", "a PyTorch classifier: fix its hot layer, then its data stall")
n_samples = lab.pick(small=2048, full=16384)
batch_size, seq_len, vocab_size, dim = 64, 32, 2000, 64
torch.manual_seed(0)

# %% [markdown]
# ## The model and its data
#
# Short texts, each labelled with one of three classes. The `Dataset` tokenizes a text when it
# is read: lower case, split into words with a regular expression, look each word up in the
# vocabulary, cut or pad to `seq_len` ids. The model embeds each id as a `dim`-long vector,
# averages them and classifies the average with a small MLP.
#
# Its embedding is written as the textbook defines it: a one-hot vector times the embedding
# matrix.

# %%
rng = np.random.default_rng(0)
WORDS = [f"w{i}" for i in range(1, vocab_size)]
VOCAB = {word: i for i, word in enumerate(WORDS, start=1)}  # 0 pads
texts = [" ".join(rng.choice(WORDS, size=rng.integers(40, 120))) + "." for _ in range(n_samples)]
labels = torch.tensor([int(t.split()[0][1:]) % 3 for t in texts])


def tokenize(text):
    ids = [VOCAB.get(word, 0) for word in re.findall(r"[a-z0-9]+", text.lower())][:seq_len]
    return torch.tensor(ids + [0] * (seq_len - len(ids)))


class TextDataset(Dataset):
    """Tokenizes one text each time it is read."""

    def __init__(self, texts, labels):
        self.texts, self.labels = texts, labels

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        return tokenize(self.texts[i]), self.labels[i]


class OneHotEmbedding(nn.Module):
    """The embedding of each id: its one-hot vector times the embedding matrix."""

    def __init__(self, weight):
        super().__init__()
        self.weight = nn.Parameter(weight.detach().clone())

    def forward(self, ids):
        return nn.functional.one_hot(ids, self.weight.shape[0]).float() @ self.weight


class Classifier(nn.Module):
    def __init__(self, embed, head):
        super().__init__()
        self.embed, self.head = embed, head

    def forward(self, ids):
        return self.head(self.embed(ids).mean(dim=1))


weights = torch.randn(vocab_size, dim) * 0.1


def make_model(embedding_class):
    """A fresh classifier with the given embedding and the same starting weights every time."""
    torch.manual_seed(1)  # the head's initial weights
    head = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, 3))
    return Classifier(embedding_class(weights), head)


def make_step(model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()

    def train_step(batch):
        ids, y = batch
        optimizer.zero_grad()
        loss = loss_fn(model(ids), y)
        loss.backward()
        optimizer.step()
        return loss

    return train_step


def make_loader(dataset):
    """Shuffled batches of `batch_size`, the same order for the same dataset size."""
    return DataLoader(
        dataset, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0)
    )


model = make_model(OneHotEmbedding)
loader = make_loader(TextDataset(texts, labels))
model

# %% [markdown]
# ## 1. Baseline, then profile
#
# `measure_training` times the loop (everyo's function takes any step and any iterable of
# batches) and reports, apart, the time the loop waited for the loader.

# %%
baseline = measure_training(
    make_step(make_model(OneHotEmbedding)), loader, warmup=2, memory=False
)
print(baseline)

# %% [markdown]
# The same loop under `%%everyo_profile`: nothing in the model or the loop changes. The table
# lists each layer by class and by its path in `model.named_modules()` (`OneHotEmbedding
# [embed]`), forward and backward apart, the optimizer's steps, and the waits for batches.

# %%
%%everyo_profile --label torch-baseline --top 8
step = make_step(model)
for batch in loader:
    step(batch)

# %% [markdown]
# **Exercise 1.** Which layer holds the most *self* time? Take it from the dashboard's table or
# from `analysis.top_self(runs["torch-baseline"])`.

# %% [exercise]
hot_layer = "Classifier"  # TODO: the row with the most self time

# %% [solution]
hot_layer = analysis.top_self(runs["torch-baseline"], k=1)[0]["name"]

# %% [check]
top = analysis.top_self(runs["torch-baseline"], k=1)[0]
wall_ms = runs["torch-baseline"].wall_ns / 1e6
lab.check(
    names.matches(hot_layer, top),
    f"{hot_layer!r} is not the row with the most self time; sort the table by self time "
    "(a class name, or a label as the table shows it)",
    passed=f"{top['name']} holds {top['self_ms']:.0f} ms of self time, "
    f"{top['self_ms'] / wall_ms:.0%} of the {wall_ms:.0f}-ms run",
)

# %% [markdown]
# ## 2. Fix the hot layer
#
# The one-hot product computes `batch × seq_len × vocab_size × dim` multiply-adds to pick one
# row of the matrix per id, and allocates a `batch × seq_len × vocab_size` one-hot tensor
# first: nearly all of it multiplies by zero. Picking the rows is an index lookup, which is
# what `nn.Embedding` and `nn.functional.embedding` do. Its gradient is the same too: each
# picked row receives the gradient of its position.
#
# **Exercise 2.** Write `LookupEmbedding.forward` so that it gives the same vectors as
# `OneHotEmbedding` without the one-hot product.

# %% [exercise]
class LookupEmbedding(OneHotEmbedding):
    """The same embedding as OneHotEmbedding, by looking the rows up."""

    def forward(self, ids):
        # TODO: pick the rows of self.weight without building one-hot vectors
        return nn.functional.one_hot(ids, self.weight.shape[0]).float() @ self.weight

# %% [solution]
class LookupEmbedding(OneHotEmbedding):
    """The same embedding as OneHotEmbedding, by looking the rows up."""

    def forward(self, ids):
        return nn.functional.embedding(ids, self.weight)

# %%
fixed_model = make_model(LookupEmbedding)
ids, y = next(iter(loader))
with torch.no_grad():
    layer_speedup = interleaved(model.embed, fixed_model.embed, ids, warmup=2, repeat=10)
print(layer_speedup)


def gradient(m):
    """The embedding's gradient for one batch, from a fresh copy of the model."""
    copy = make_model(type(m.embed))
    nn.CrossEntropyLoss()(copy(ids), y).backward()
    return copy.embed.weight.grad


reference, candidate = make_model(OneHotEmbedding), make_model(LookupEmbedding)
with torch.no_grad():
    out_error = float((reference(ids) - candidate(ids)).abs().max())
grad_error = float((gradient(reference) - gradient(candidate)).abs().max())

# %% [check]
lab.check(
    layer_speedup.speedup >= 3 and layer_speedup.verdict == "faster",
    f"the embedding is {layer_speedup.speedup:.1f}x faster ({layer_speedup.verdict}); look the "
    "rows up (nn.functional.embedding) instead of multiplying one-hot vectors",
    passed=f"the embedding is {layer_speedup.speedup:.0f}x faster",
    measured=layer_speedup,
)
lab.check(
    out_error <= 1e-6 and grad_error <= 1e-6,
    f"outputs differ by up to {out_error:.1e} and gradients by {grad_error:.1e}: the lookup "
    "must give exactly the rows the one-hot product picks",
    passed=f"same outputs (max difference {out_error:.0e}) and gradients ({grad_error:.0e})",
)

# %% [markdown]
# ## 3. The bottleneck moves: the data-loading stall
#
# With the layer fixed, a step takes a fraction of what it did, but the loop still waits for
# each batch while `TextDataset` tokenizes 64 texts, one `__getitem__` at a time, and the
# loader stacks them. Profile the fixed model, this time with the Python API (`profile()` is
# what the magic runs, without the dashboard), and print the rows with the most self time: the
# waits for batches, `DataLoader.next` (kind `data`), now come first.

# %%
from everyo.profiler import profile

with profile(label="torch-layer-fixed"):
    step = make_step(fixed_model)
    for batch in loader:
        step(batch)
stall = analysis.top_self(runs["torch-layer-fixed"], k=3)
print(stall)

# %%
layer_fixed = measure_training(
    make_step(make_model(LookupEmbedding)), loader, warmup=2, memory=False
)
print(layer_fixed)
data_share = layer_fixed.data_times.sum() / layer_fixed.elapsed_s
print(f"the loop now waits for data {data_share:.0%} of the time")

# %% [check]
lab.check(
    stall[0]["kind"] == "data",
    f"the row with the most self time is {stall[0]['name']} ({stall[0]['kind']}), not the wait "
    "for batches: is fixed_model built with LookupEmbedding (exercise 2)?",
    passed=f"{stall[0]['name']} holds the most self time of the fixed model's loop: it waits "
    f"for data {data_share:.0%} of the time",
)

# %% [markdown]
# The tokens of a text do not change from epoch to epoch: tokenize every text **once**, keep
# the ids in one tensor, and load batches from a `TensorDataset`, which indexes tensors
# instead of running Python per text. (`DataLoader(num_workers=2)` would move the tokenizing to
# two worker processes instead; on a machine with free cores that hides the wait, but here the
# workers take cores from the training loop, and the work is still done every epoch.)
#
# **Exercise 3.** Build `fast_loader` with `make_loader` from a `TensorDataset` of all the
# texts' ids (in order) and `labels`.

# %% [exercise]
# TODO: tokenize every text once and load the ids from a TensorDataset
fast_loader = make_loader(TextDataset(texts, labels))

# %% [solution]
all_ids = torch.stack([tokenize(text) for text in texts])
fast_loader = make_loader(TensorDataset(all_ids, labels))

# %%
data_fixed = measure_training(
    make_step(make_model(LookupEmbedding)), fast_loader, warmup=2, memory=False
)
print(data_fixed)
wait_cut = layer_fixed.mean_data_ms / data_fixed.mean_data_ms


def same_batches(a, b):
    """Do two loaders' datasets give equal batches, in the same order? (Fresh loaders: each
    pass over a loader draws a new shuffle from its generator.)"""
    a, b = make_loader(a.dataset), make_loader(b.dataset)
    return len(a) == len(b) and all(
        torch.equal(x, u) and torch.equal(y, v) for (x, y), (u, v) in zip(a, b)
    )

# %% [check]
machine = worst([layer_fixed.machine_state, data_fixed.machine_state])
busy = machine is not None and machine.verdict == "contended"
lab.check(
    same_batches(loader, fast_loader),
    "fast_loader must give the same batches as loader: tokenize every text with tokenize(), "
    "in order, and build it with make_loader",
    passed="the same batches, in the same order",
)
lab.check(
    wait_cut >= 3,
    f"the loop waits {data_fixed.mean_data_ms:.2f} ms per batch for data (it waited "
    f"{layer_fixed.mean_data_ms:.2f} ms); tokenize once, outside the loader, to cut that 3x"
    + (f"; inconclusive: rerun when the machine is quieter ({machine.line()})" if busy else ""),
    passed=f"{wait_cut:.1f}x less waiting for data: {layer_fixed.mean_data_ms:.2f} -> "
    f"{data_fixed.mean_data_ms:.2f} ms per batch"
    + (f" ({machine.line()})" if machine else ""),
)

# %% [markdown]
# ## 4. Prove it: the comparison and the sweep
#
# The profile of the fixed loop, compared with the baseline's (`--compare`: under the
# dashboard, both flame charts on one time axis and a diff table, biggest change first), shows
# both changes at once: the embedding's rows and the waits for batches shrink; the rest stays.

# %%
%%everyo_profile --label torch-fixed --compare torch-baseline --top 8
step = make_step(fixed_model)
for batch in fast_loader:
    step(batch)

# %% [markdown]
# The whole epoch, before and after, timed in turns (`interleaved`) so that a busy machine
# slows both alike; its verdict says when the machine was too busy to tell.

# %%
def epoch(embedding_class, loader):
    def run():
        step = make_step(make_model(embedding_class))
        for batch in loader:
            step(batch)

    run.__name__ = f"{embedding_class.__name__} + {type(loader.dataset).__name__}"
    return run


epoch_speedup = interleaved(
    epoch(OneHotEmbedding, loader), epoch(LookupEmbedding, fast_loader), warmup=1, repeat=4
)
print(epoch_speedup)

# %% [check]
lab.check(
    epoch_speedup.speedup >= 3 and epoch_speedup.verdict == "faster",
    f"an epoch is {epoch_speedup.speedup:.1f}x faster ({epoch_speedup.verdict}); fix both the "
    "layer (exercise 2) and the loader (exercise 3)",
    passed=f"an epoch is {epoch_speedup.speedup:.1f}x faster",
    measured=epoch_speedup,
)

# %% [markdown]
# A comparison at one batch size could hide a crossover: sweep both models across batch sizes
# (inference, as lab 05 does). `%everyo_sweep` takes a `torch.nn.Module` as it is: evaluation
# mode and `torch.no_grad()` while it measures, restored after. On a CPU, a torch model's peak
# memory is the process's **resident-set growth** (torch's allocator is invisible to
# `tracemalloc`), and the charts say so; on a GPU it is torch's CUDA allocator's peak.

# %%
sweep_sizes = lab.pick(small="16,64,256", full="16,64,256,1024")


def make_ids(n):
    return torch.randint(0, vocab_size, (n, seq_len), generator=torch.Generator().manual_seed(n))


%everyo_sweep model make_ids --batch-sizes $sweep_sizes --warmup 2 --repeat 5 --label onehot

# %%
%everyo_sweep fixed_model make_ids --batch-sizes $sweep_sizes --warmup 2 --repeat 5 --label lookup

# %%
before, after = everyo_lab.sweeps["onehot"].result, everyo_lab.sweeps["lookup"].result
print(after.memory_label)
measured_before = {r.batch_size: r for r in before.rows if r.ok}
ratios = {
    r.batch_size: r.throughput / measured_before[r.batch_size].throughput
    for r in after.rows
    if r.ok and r.batch_size in measured_before
}
print({bs: f"{r:.0f}x" for bs, r in ratios.items()})
print(after.recommendation)

# %% [check]
contended = [r.batch_size for r in [*before.rows, *after.rows] if r.verdict == "contended"]
lab.check(
    len(ratios) >= 2 and min(ratios.values()) >= 3,
    "the lookup model must reach at least 3x the one-hot model's throughput at every batch "
    f"size both sweeps measured (ratios { {b: round(r, 1) for b, r in ratios.items()} })"
    + (
        f"; inconclusive: rerun when the machine is quieter (contended at {contended})"
        if contended
        else ""
    ),
    passed=f"{min(ratios.values(), default=0):.0f}x to {max(ratios.values(), default=0):.0f}x "
    f"the throughput at every batch size; peak memory measured as {after.memory_label}",
)

# %% [markdown]
# ## 5. Record the result

# %%
lab.record(
    n_samples=n_samples,
    batch_size=batch_size,
    hot_layer=hot_layer,
    samples_per_s_baseline=baseline.samples_per_s,
    samples_per_s_layer_fixed=layer_fixed.samples_per_s,
    samples_per_s_fixed=data_fixed.samples_per_s,
    layer_speedup=layer_speedup.speedup,
    data_share_after_layer_fix=float(data_share),
    data_wait_cut=wait_cut,
    epoch_speedup=epoch_speedup.speedup,
    sweep_throughput_ratios=ratios,
)
everyo_lab.to_html(runs["torch-fixed"], "results/09_pytorch-fixed.html")

# %% [markdown]
# **Try next:** replace `OneHotEmbedding` with `nn.EmbeddingBag(mode="mean")`, which looks the
# rows up and averages them in one operation, and profile it; or sweep the training step
# (`--mode train` with `make_step(fixed_model)` and a batch maker that returns `(ids, y)`).
