# %% [markdown]
# # Lab 04: the data pipeline
#
# **Goal:** measure a training loop layer by layer, show that data loading dominates, move the
# per-sample work out of the loop (≥ 5× faster loading, same batches), and hide at least half
# of a slow source's wait behind training with prefetching.
#
# **Time:** about 45 minutes. **Prerequisites:** labs 01 and 02.
#
# **Guide sections:** DataLoader Performance, Bottleneck Analysis, Batch Size Optimization,
# Training Throughput.
#
# **Layered benchmarking** starts coarse: is the loop slow at all (samples/s, batches/s)? Then
# it splits the loop into layers (loading, compute) and only then profiles the layer that
# dominates. A workload limited by reading and preparing data is **I/O-bound**: a faster model
# does not help it; a faster pipeline does.

# %%
import time

import numpy as np

import everyo as eo
from everyo.bench import measure_training
from everyo.machine_state import worst
from everyo.profiler import analysis, runs
from everyo_lab.labs import start_lab

%load_ext everyo_lab

lab = start_lab("04_data_pipeline", "data loading dominates: cache the transform, prefetch")
n_samples = lab.pick(small=4096, full=32768)
batch_size = 512

# %% [markdown]
# ## The pipeline
#
# The samples arrive as lines of comma-separated counts (a CSV file, read into memory). Each
# sample is parsed and transformed when it is read: `log1p`, then standardised with statistics
# computed once. The `Dataset` below does that per sample, in `__getitem__`, which is how many
# first versions are written.

# %%
rng = np.random.default_rng(0)
raw = rng.poisson(20.0, size=(n_samples, 32)).astype(np.int64)
labels = (raw[:, :16].sum(axis=1) > raw[:, 16:].sum(axis=1)).astype(np.int64)
lines = [",".join(map(str, row)) for row in raw]  # the CSV text
logs = np.log1p(raw.astype(np.float32))
MU, SIGMA = logs.mean(axis=0), logs.std(axis=0)
print(lines[0])


class CountsDataset:
    """Parses and transforms one sample at a time."""

    def __init__(self, lines, labels):
        self.lines, self.labels = lines, labels

    def __len__(self):
        return len(self.lines)

    def __getitem__(self, i):
        counts = np.array(self.lines[i].split(","), dtype=np.float32)
        return (np.log1p(counts) - MU) / SIGMA, self.labels[i]


def make_model():
    return eo.Sequential(eo.Linear(32, 64, seed=0), eo.ReLU(), eo.Linear(64, 2, seed=1))


def make_step(model):
    optimizer = eo.optim.SGD(model.parameters(), lr=0.05)
    loss_fn = eo.CrossEntropyLoss()

    def train_step(batch):
        x, y = batch
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return train_step


loader = eo.DataLoader(CountsDataset(lines, labels), batch_size=batch_size, shuffle=True, seed=0)
print(loader)  # ceil(N / B) batches, as the guide computes: fast_path=False here

# %% [markdown]
# ## 1. Macro: throughput first
#
# `measure_training` runs the loop and reports the guide's training figures: samples per
# second, time per epoch, and the average time per batch: the wait for the loader plus the
# training step, each shown apart.

# %%
baseline = measure_training(make_step(make_model()), loader, warmup=2, memory=False)
print(baseline)

# %% [markdown]
# **Exercise 1.** Is this loop bound by the data or by the model? Compute the share of the
# loop's time spent fetching batches from `baseline.data_times` and `baseline.step_times`
# (seconds, one entry per step), and name the layer that dominates.

# %% [exercise]
data_share = 0.0  # TODO: fraction of the time spent loading data (0..1)
dominant_layer = "model"  # TODO: "data" or "model"

# %% [solution]
data_share = baseline.data_times.sum() / (baseline.data_times.sum() + baseline.step_times.sum())
dominant_layer = "data" if data_share > 0.5 else "model"

# %% [check]
share = baseline.data_times.sum() / baseline.elapsed_s
lab.check(
    abs(data_share - share) < 0.02 and dominant_layer == ("data" if share > 0.5 else "model"),
    f"data_share={data_share:.2f}, dominant_layer={dominant_layer!r}; the loader's share is "
    "data_times.sum() / (data_times.sum() + step_times.sum())",
    passed=f"{share:.0%} of the loop waits for data: the "
    + ("pipeline is the bottleneck" if share > 0.5 else "model, not the pipeline, dominates here")
    + f" ({baseline.machine_state.line() if baseline.machine_state else 'machine state unknown'})",
)

# %% [markdown]
# **On a shared machine.** The share above is a ratio of two times measured in the same loop,
# so a busy machine slows both sides alike, *unless* the model's matrix products run on several
# BLAS threads: another process's BLAS work then makes them collapse (their threads spin waiting
# for each other while the other process runs), the model's side grows, and the data share can
# fall from about 50 % to 26 % between two runs of this cell. `start_lab` therefore applied a
# thread policy (its first output says which), and `measure_training` prints the machine's state
# under its figures: `busy` is fine for a ratio like this one, `contended` means rerun. On a
# class JupyterHub keep `threads="auto"` (the default), or set one thread for the whole lab with
# `start_lab(..., threads=1)`.

# %% [markdown]
# ## 2. Micro: profile the dominant layer
#
# The profile shows the same split by event kind: `DataLoader.next` (kind `data`) against the
# model's modules and the optimizer. With the Python-level picture in mind, the cost is clear:
# per batch, 512 calls of `__getitem__`, each parsing a line of text and running small NumPy
# transforms, and `default_collate` stacking 512 arrays.

# %%
%%everyo_profile --label pipeline --top 6
step = make_step(make_model())
for batch in loader:
    step(batch)

# %% [markdown]
# **Which line of `__getitem__`?** The table says `DataLoader.next` dominates; sampled stacks
# say which line inside it. `--sample 0.5` records the Python stack every 0.5 ms, and
# `hot_lines(run, "DataLoader.next")` reads the samples taken inside the batch fetches, line
# by line (everyo's own frames, the loader and `default_collate`, are folded).

# %%
%%everyo_profile --label pipeline-lines --sample 0.5 --no-live --top 3
for batch in loader:
    pass

# %%
from everyo.profiler import hot_lines

hot = hot_lines(runs["pipeline-lines"], "DataLoader.next")
print(hot)

# %% [markdown]
# **Exercise 1b.** Which line of `CountsDataset.__getitem__` spends the most time itself? Take
# it from `hot.lines` (one dict per line, by `self_share`, with its `function` and `source`).

# %% [exercise]
transform_line = ""  # TODO: the `source` of the hottest line of CountsDataset.__getitem__

# %% [solution]
transform_line = next(
    r for r in hot.lines if r["function"] == "CountsDataset.__getitem__"
)["source"]

# %% [check]
top = next(r for r in hot.lines if r["function"] == "CountsDataset.__getitem__")
lab.check(
    transform_line.strip() == top["source"],
    "transform_line must be the `source` of the first row of hot.lines whose function is "
    f"CountsDataset.__getitem__ (it is {top['source']!r})",
    passed=f"{top['self_share']:.0%} of the batch fetches on `{top['source']}`, once per "
    "sample: the work to move out of the loop",
)

# %% [markdown]
# ## 3. Change one thing: transform once, then load by indexing
#
# The parsing and the transform do not depend on the epoch, so do them once for the whole
# dataset (cache the result, or preprocess offline into a binary format such as `.npy`,
# Arrow or Parquet instead of CSV) and keep the results in an `ArrayDataset`. The `DataLoader` then takes
# its **fast path**: one vectorised gather per batch, no per-sample calls.
#
# **Exercise 2.** Build `fast_loader`, with the same batch size, `shuffle=True` and `seed=0`,
# from an `eo.ArrayDataset` of the parsed and transformed features and the labels. Hint:
# `np.array([line.split(",") for line in lines], dtype=np.float32)` parses all lines at once.

# %% [exercise]
# TODO: parse and transform all of `lines` once, and load the result from an eo.ArrayDataset
fast_loader = eo.DataLoader(
    CountsDataset(lines, labels), batch_size=batch_size, shuffle=True, seed=0
)

# %% [solution]
counts = np.array([line.split(",") for line in lines], dtype=np.float32)
features = (np.log1p(counts) - MU) / SIGMA
fast_loader = eo.DataLoader(
    eo.ArrayDataset(features, labels), batch_size=batch_size, shuffle=True, seed=0
)

# %%
def epoch_seconds(loader, repeat=3):
    """Median time to iterate the loader once, with no model: the data layer alone."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _batch in loader:
            pass
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def fresh(loader):
    """A new loader with the same settings: its first epoch has the same shuffle order."""
    return eo.DataLoader(
        loader.dataset, batch_size=loader.batch_size, shuffle=loader.shuffle, seed=loader.seed,
        collate_fn=loader.collate_fn, prefetch=loader.prefetch,
    )


def same_batches(a, b, limit=None):
    """Do two loaders' first epochs give equal batches (float32 tolerance), in order?"""
    if len(a) != len(b):
        return False
    for i, (x, y) in enumerate(zip(fresh(a), fresh(b))):
        if i == limit:
            break
        if not (
            np.allclose(x[0].numpy(), y[0].numpy(), rtol=1e-6, atol=1e-6)
            and np.array_equal(x[1].numpy(), y[1].numpy())
        ):
            return False
    return True


slow_s, fast_s = epoch_seconds(loader), epoch_seconds(fast_loader)
loading_speedup = slow_s / fast_s
print(f"loader alone: {slow_s * 1e3:.3g} ms -> {fast_s * 1e3:.3g} ms per epoch "
      f"({loading_speedup:.1f}x); fast path: {fast_loader.fast_path}")

# %% [check]
lab.check(
    fast_loader.fast_path and loading_speedup >= 5,
    f"loading is {loading_speedup:.1f}x faster (fast path: {fast_loader.fast_path}); use an "
    "eo.ArrayDataset of the pre-transformed features to reach 5x",
    passed=f"loading is {loading_speedup:.0f}x faster",
)
lab.check(
    same_batches(loader, fast_loader),
    "fast_loader must yield the same batches as loader: transform with the same MU and "
    "SIGMA, keep batch_size, shuffle=True and seed=0",
    passed="identical batches, in the same order",
)

# %% [markdown]
# The training loop again, now on the cached data:

# %%
after_cache = measure_training(make_step(make_model()), fast_loader, warmup=2, memory=False)
print(after_cache)

# %% [markdown]
# ## 4. A slow source: overlap loading with compute
#
# Some data cannot be cached: it arrives from network storage, or it does not fit in memory.
# Below, the data sits in *shards* of one batch each (as in WebDataset's tar shards), and every
# shard read waits (`time.sleep`, as a real read waits for the disk or network without using
# the CPU). The model trains on an accelerator: the host launches the step, then waits for the
# device to finish, modelled here by a wait of the same length as a read (so the measurement
# holds on a busy shared machine as well as on yours). Loading and training take turns, so the
# loop runs at the *sum* of the two times.
#
# `DataLoader(..., prefetch=k)` reads up to `k` batches ahead on a background thread while the
# model trains on the current one ("Asynchronous everything: prefetching, IO, logging"). Then
# the loop runs at the *larger* of the two times.

# %%
read_s = device_s = 0.015


def make_device_step(model):
    step = make_step(model)

    def device_step(batch):
        loss = step(batch)
        time.sleep(device_s)  # the host waits for the accelerator; the CPU is free meanwhile
        return loss

    return device_step


class ShardStorage:
    """Shards of `batch_size` samples on slow storage: each read waits `read_s`."""

    def __init__(self, features, labels, batch_size):
        self.features, self.labels, self.batch_size = features, labels, batch_size

    def __len__(self):
        return len(self.labels) // self.batch_size

    def __getitem__(self, i):
        time.sleep(read_s)  # waits like I/O: the CPU is free for the training thread
        rows = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return self.features[rows], self.labels[rows]


def one_shard(shards):  # batch_size=1: a batch is one shard
    return shards[0]


storage = ShardStorage((logs - MU) / SIGMA, labels, batch_size=256)
steps = len(storage) - 2  # warmup 2 + steps: one pass, one prefetch thread
slow_loader = eo.DataLoader(storage, batch_size=1, shuffle=True, seed=0, collate_fn=one_shard)
serial = measure_training(
    make_device_step(make_model()), slow_loader, steps=steps, warmup=2, memory=False
)
print(serial)

# %% [markdown]
# **Exercise 3.** Make `overlapped_loader` read the same shards as `slow_loader` while the
# model trains on the previous one.

# %% [exercise]
overlapped_loader = eo.DataLoader(
    storage, batch_size=1, shuffle=True, seed=0, collate_fn=one_shard
)  # TODO: let a background thread read ahead

# %% [solution]
overlapped_loader = eo.DataLoader(
    storage, batch_size=1, shuffle=True, seed=0, collate_fn=one_shard, prefetch=2
)

# %%
overlapped = measure_training(
    make_device_step(make_model()), overlapped_loader, steps=steps, warmup=2, memory=False
)
print(overlapped)
overlap_speedup = overlapped.samples_per_s / serial.samples_per_s

# %% [check]
lab.check(
    same_batches(slow_loader, overlapped_loader, limit=3),
    "overlapped_loader must read the same shards (same storage, batch_size, shuffle, seed)",
    passed="same batches with and without prefetching",
)
hidden = 1 - overlapped.mean_data_ms / serial.mean_data_ms
serial_ms, overlapped_ms = (r.elapsed_s / r.steps * 1e3 for r in (serial, overlapped))
machine = worst([serial.machine_state, overlapped.machine_state])
lab.check(
    hidden >= 0.5,
    f"the loop still waits {overlapped.mean_data_ms:.1f} ms per batch for data (it waited "
    f"{serial.mean_data_ms:.1f} ms with serial reads); read ahead on a background thread "
    "(DataLoader's prefetch=) to hide at least half of that wait",
    passed=f"{hidden:.0%} of the wait for data is hidden behind training: a batch takes "
    f"{overlapped_ms:.4f} ms instead of {serial_ms:.4f} ms (each result's 'Average time per "
    f"batch' above), {overlap_speedup:.2f}x the samples/s"
    f" ({machine.line() if machine else 'machine state unknown'})",
)

# %% [markdown]
# ## 5. Record the result
#
# Note what the guide says: this `DataLoader` has no `num_workers`; prefetching is one thread,
# which helps when batch preparation *waits* (I/O) or runs NumPy code that releases the GIL.
# For in-memory arrays the fast path is already cheaper than a thread hand-off.

# %%
lab.record(
    n_samples=n_samples,
    batch_size=batch_size,
    batches_per_epoch=len(loader),
    data_share=float(data_share),
    samples_per_s_baseline=baseline.samples_per_s,
    samples_per_s_cached=after_cache.samples_per_s,
    loading_speedup=loading_speedup,
    prefetch_speedup=overlap_speedup,
    wait_hidden=hidden,
)

# %% [markdown]
# **Try next:** set `read_s` to twice `device_s` and predict how much of the wait prefetching
# can hide before you measure it; try `prefetch=1` and `prefetch=4`.
