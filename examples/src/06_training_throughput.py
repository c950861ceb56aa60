# %% [markdown]
# # Lab 06: training throughput
#
# **Goal:** read a training step by its phases (data, forward, loss, backward, optimizer),
# raise samples/s at least 3× by changing the batch size, keep the optimisation of a large
# batch with gradient accumulation (same weights), and decide on mixed precision from measured
# speed and accuracy against float32.
#
# **Time:** about 50 minutes. **Prerequisites:** labs 01 and 04.
#
# **Guide sections:** Training Throughput, Numerical Precision, Memory Optimization,
# Batch Size Optimization, Performance Metrics.
#
# Training throughput is samples processed per second, $SamplesProcessed / ElapsedSeconds$.
# Every optimizer step also pays costs that do not grow with the batch: Python dispatch of each
# operation, the optimizer update of every parameter, the loader's hand-over. With small
# batches those fixed costs dominate.

# %%
import numpy as np

import everyo as eo
from everyo.bench import measure_training
from everyo.datasets import make_blobs
from everyo.profiler import analysis, runs
from everyo_lab.labs import interleaved, start_lab

%load_ext everyo_lab

lab = start_lab("06_training_throughput", "phases, batch size, accumulation, mixed precision")
n_samples = lab.pick(small=2048, full=20000)
X_all, y_all = make_blobs(n_samples + 512, n_features=16, centers=4, seed=0)
X, y, Xv, yv = X_all[:n_samples], y_all[:n_samples], X_all[n_samples:], y_all[n_samples:]


def make_trainer(**options):
    model = eo.Sequential(
        eo.Linear(16, 128, seed=0), eo.ReLU(), eo.Linear(128, 128, seed=1), eo.ReLU(),
        eo.Linear(128, 4, seed=2),
    )
    optimizer = eo.optim.SGD(model.parameters(), lr=0.05)
    return eo.Trainer(model, optimizer, eo.CrossEntropyLoss(), metrics=["accuracy"], **options)


def loader(batch_size, shuffle=True, n=None):
    data = eo.ArrayDataset(X[:n], y[:n])
    return eo.DataLoader(data, batch_size=batch_size, shuffle=shuffle, seed=0)

# %% [markdown]
# ## 1. Baseline and phases
#
# `Trainer.fit` records the guide's figures per epoch: samples/s, time per epoch, mean batch
# time, validation time and peak memory. Profiled, each step shows five regions of kind
# `train`: `data`, `forward`, `loss`, `backward`, `optimizer`.

# %%
small_batch = 8
history = make_trainer().fit(loader(small_batch), epochs=1, progress=False)
baseline = history.last
print({k: round(v, 4) for k, v in baseline.items() if isinstance(v, float)})

# %%
%%everyo_profile --label batch-8 --top 10
make_trainer().fit(loader(small_batch), epochs=1, progress=False)

# %% [markdown]
# **Exercise 1.** Which phase takes the most time? Look at the rows of kind `train` in the
# table (`analysis.summarize(runs["batch-8"])`).

# %% [exercise]
dominant_phase = "TODO"  # TODO: data, forward, loss, backward or optimizer

# %% [solution]
phases = [r for r in analysis.summarize(runs["batch-8"]) if r["kind"] == "train"]
dominant_phase = max(phases, key=lambda r: r["total_ms"])["name"]

# %% [check]
phase_ms = {r["name"]: r["total_ms"] for r in analysis.summarize(runs["batch-8"])
            if r["kind"] == "train"}
top_phase = max(phase_ms, key=phase_ms.get)
lab.check(
    dominant_phase == top_phase,
    f"{dominant_phase!r} is not the phase with the most time; compare total_ms of the train "
    "rows",
    passed=f"{top_phase} dominates: " + ", ".join(f"{k} {v:.0f} ms" for k, v in phase_ms.items()),
)

# %% [markdown]
# Each phase runs once per step, and an epoch has $\lceil N / B \rceil$ steps: with
# `B = 8` that is many steps, each paying the fixed costs on only 8 samples.
#
# ## 2. Change one thing: the batch size
#
# **Exercise 2.** Choose a batch size that processes at least 3× the samples per second of
# `small_batch`. Change nothing else.

# %% [exercise]
batch_size = 8  # TODO: a larger batch

# %% [solution]
batch_size = 128

# %% [markdown]
# `measure_training` times each step; samples/s from the *median* step time is robust to the
# occasional slow step of a shared machine.

# %%
def samples_per_s(batch):
    stats = measure_training(make_trainer(), loader(batch), warmup=2, memory=False)
    return batch / (stats.median_batch_ms / 1e3), stats


before_sps, _ = samples_per_s(small_batch)
after_sps, record = samples_per_s(batch_size)
throughput_gain = after_sps / before_sps
print(record)
print(f"batch {small_batch}: {before_sps:.0f} samples/s; batch {batch_size}: {after_sps:.0f} "
      f"samples/s ({throughput_gain:.1f}x); {len(loader(batch_size))} steps per epoch instead "
      f"of {len(loader(small_batch))}")

# %% [check]
lab.check(
    throughput_gain >= 3,
    f"batch {batch_size} gives {throughput_gain:.1f}x the samples/s of batch {small_batch}; "
    "fewer, larger steps spread the fixed per-step cost: try 64 or more",
    passed=f"{throughput_gain:.1f}x the samples/s at batch {batch_size}",
)

# %% [markdown]
# A different batch size also changes the optimisation (fewer updates per epoch, less noisy
# gradients), so check the accuracy as well as the speed. And a larger batch needs more
# memory for its activations.
#
# ## 3. Gradient accumulation: a large batch in small pieces
#
# When the batch you want does not fit in memory, run several micro-batches, add up their
# gradients and step once. `Trainer(accumulate_steps=k)` divides each micro-batch's loss by `k`
# and steps every `k` batches, so `k` batches of size `B` step like one batch of `k·B`.
#
# **Exercise 3.** With micro-batches of 32, choose `accumulate_steps` so that training gives
# the same weights as batches of 128.

# %% [exercise]
accumulate_steps = 1  # TODO: micro-batches per optimizer step

# %% [solution]
accumulate_steps = 4

# %%
# eight optimizer steps on the first 1024 samples: over many more steps, float32 rounding
# (the sums are taken in a different order) adds up past the tolerance
big = make_trainer()
big.fit(loader(128, shuffle=False, n=1024), epochs=1, progress=False)
accumulated = make_trainer(accumulate_steps=accumulate_steps)
accumulated.fit(loader(32, shuffle=False, n=1024), epochs=1, progress=False)
w_big = [p.numpy() for p in big.model.parameters()]
w_acc = [p.numpy() for p in accumulated.model.parameters()]
max_diff = max(float(np.abs(a - b).max()) for a, b in zip(w_big, w_acc))

# %% [check]
lab.check(
    all(np.allclose(b, a, rtol=1e-5, atol=1e-6) for a, b in zip(w_big, w_acc)),
    f"after 1024 samples the weights differ by up to {max_diff:.2e}; with accumulate_steps=k, "
    "k micro-batches of 32 make one step: which k makes that step a batch of 128?",
    passed=f"same weights as batch 128 (max difference {max_diff:.1e})",
)

# %% [markdown]
# ## 4. Mixed precision: measure, then decide
#
# `eo.autocast("float16")` runs matrix products in float16 while the weights stay float32;
# losses and softmax stay float32. `eo.GradScaler` (which `Trainer(autocast="float16")` uses)
# multiplies the loss so small float16 gradients do not flush to zero, and skips steps whose
# gradients overflowed. On GPUs with tensor cores float16 matrix products are much faster. On a
# CPU, NumPy has no float16 matrix kernels.
#
# First the numerics of one forward pass against float32, at the guide's tolerances
# (`rtol=1e-5, atol=1e-7`), and at a looser one suited to float16's 11-bit mantissa:

# %%
model = make_trainer().model
xb = eo.tensor(Xv)
with eo.no_grad():
    reference = model(xb).numpy()
    with eo.autocast("float16"):
        half = model(xb).numpy().astype(np.float32)
rel_err = float(np.abs(half - reference).max() / np.abs(reference).max())
print(f"float16 forward: max error {rel_err:.1e} of the output range")
print("within the guide's float32 tolerance:", np.allclose(half, reference, rtol=1e-5, atol=1e-7))
print("within rtol=1e-2, atol=1e-2:", np.allclose(half, reference, rtol=1e-2, atol=1e-2))

# %% [markdown]
# Then the two things that decide: the speed of a training epoch, and the model it trains
# (on the first 512 samples: float16 matrix products on a CPU are slow).

# %%
def epoch_s(trainer):
    return trainer.fit(loader(128, n=512), epochs=1, progress=False).last["epoch_time_s"]


f32, f16 = make_trainer(), make_trainer(autocast="float16")


def float32_epoch():
    return epoch_s(f32)


def float16_epoch():
    return epoch_s(f16)


# in turns, so that a busy neighbour slows both alike (three epochs each)
with np.errstate(over="ignore"):
    precision_speed = interleaved(float32_epoch, float16_epoch, warmup=0, repeat=3)
ratio = precision_speed.speedup
speed_words = (
    f"{ratio:.3f}x float32's speed ({ratio:.1f}x faster)" if ratio >= 1
    else f"{ratio:.3f}x float32's speed ({1 / ratio:.1f}x slower)"
)
acc32 = f32.evaluate(eo.DataLoader(eo.ArrayDataset(Xv, yv), batch_size=256))["accuracy"]
acc16 = f16.evaluate(eo.DataLoader(eo.ArrayDataset(Xv, yv), batch_size=256))["accuracy"]
print(precision_speed)
print(f"float16 autocast, epochs timed in turns with float32's: {speed_words}")
print(f"validation accuracy: float32 {acc32:.3f}, float16 autocast {acc16:.3f}")

# %% [markdown]
# **Exercise 4.** Adopt float16 only if it is measurably faster (`precision_speed.verdict`)
# *and* the trained model is as accurate (validation accuracy within 0.01 of float32). "Do not
# reduce precision solely for expected speed improvements without measuring correctness and
# runtime performance."

# %% [exercise]
use_float16 = True  # TODO: decide from precision_speed, acc16 and acc32

# %% [solution]
use_float16 = precision_speed.verdict == "faster" and abs(acc16 - acc32) <= 0.01

# %% [check]
right = precision_speed.verdict == "faster" and abs(acc16 - acc32) <= 0.01
lab.check(
    use_float16 == right,
    f"use_float16={use_float16}, but float16 autocast ran at {speed_words} "
    f"({precision_speed.verdict}) with accuracy {acc16:.3f} vs {acc32:.3f}: decide from both",
    passed=f"{'float16' if right else 'float32'} on this device: float16 autocast ran at "
    f"{speed_words} ({precision_speed.verdict}), accuracy {acc16:.3f} vs {acc32:.3f}",
    measured=precision_speed,
)

# %% [markdown]
# ## 5. Record the result
#
# One more memory habit from the guide ("avoid retaining unused computation graphs"): keep
# `loss.item()` in your logs, never `loss` itself, which holds the whole graph of its step.

# %%
lab.record(
    n_samples=n_samples,
    samples_per_s_batch_8=before_sps,
    batch_size=batch_size,
    samples_per_s=after_sps,
    throughput_gain=throughput_gain,
    dominant_phase=dominant_phase,
    accumulate_steps=accumulate_steps,
    float16_speedup=precision_speed.speedup,
    float16_forward_error=rel_err,
    use_float16=use_float16,
)
