# %% [markdown]
# # Lab 01: your first profile
#
# **Goal:** profile an MLP with `%%everyo_profile`, read its flame chart, icicle and table, find
# the module with the most *self* time, and make the model at least 3× faster with the same
# outputs.
#
# **Time:** about 30 minutes. **Prerequisites:** Python and NumPy; nothing about everyo.
#
# **Guide sections:** Overview, Performance Engineering Architecture, Performance Metrics,
# Profiling API, Profiling a Neural Network, Benchmarking Methodology, Complete Benchmark
# Example, Bottleneck Analysis.
#
# Every lab in this course is one round of the *performance loop*:
#
# 1. **Baseline**: measure latency and throughput of a representative workload.
# 2. **Profile**: see where the time goes.
# 3. **Find the dominant bottleneck**: the part that holds most of the time.
# 4. **Change one thing**, and only one.
# 5. **Re-measure** with the same workload and procedure.
# 6. **Validate the numerics**: a faster wrong answer does not count.
# 7. **Record the result.**
#
# Cells marked **Exercise** hold a `TODO` for you; the **check** cell after each one passes only
# when your change meets the bar. Run the notebook top to bottom: it stops at the first check
# that is not met yet, with a line that says what to change.

# %%
import time
import statistics

import numpy as np

import everyo as eo
from everyo.bench import benchmark
from everyo.profiler import analysis, runs
from everyo.profiler.analysis import names
from everyo_lab.labs import interleaved, start_lab

%load_ext everyo_lab

lab = start_lab("01_first_profile", "profile an MLP, find the self-time bottleneck, fix it")
batch_size = lab.pick(small=64, full=512)

# %% [markdown]
# ## The model
#
# A small MLP with a normalisation step in the middle. `RowScale` scales every sample to unit
# root-mean-square, and it is written the way a first draft often is: one row at a time.

# %%
class RowScale(eo.Module):
    """Scale each row of a (batch, features) input to unit RMS, one row at a time."""

    def forward(self, x):
        rows = [x[i] / eo.sqrt(eo.mean(x[i] * x[i]) + 1e-6) for i in range(x.shape[0])]
        return eo.stack(rows)


first = eo.Linear(32, 64, seed=0)
last = eo.Linear(64, 10, seed=1)
model = eo.Sequential(first, RowScale(), eo.ReLU(), last)
model.eval()  # inference: no dropout or batch statistics, and we run under eo.no_grad()

x = eo.randn(batch_size, 32, seed=0)
model

# %% [markdown]
# ## 1. Baseline
#
# The metrics of the guide: **latency** $L = t_{end} - t_{start}$ (ms, lower is better),
# **throughput** $T = N / t$ (samples/s, higher is better) and, later, **speed-up**
# $S = T_{baseline} / T_{optimized}$ for the *same* workload.
#
# The guide's *Complete Benchmark Example* times a model by hand: warm up, then time repeated
# calls with `time.perf_counter()` and report the distribution, not one number.

# %%
warmup_iterations, measured_iterations = 2, 10
with eo.no_grad():
    for _ in range(warmup_iterations):
        model(x)
    timings = []
    for _ in range(measured_iterations):
        start = time.perf_counter()
        output = model(x)
        timings.append((time.perf_counter() - start) * 1000)

mean_ms = statistics.mean(timings)
print(
    f"By hand: {measured_iterations} calls after {warmup_iterations} warm-up calls (not timed), "
    "profiler off"
)
print(f"Mean latency: {mean_ms:.3f} ms, median {statistics.median(timings):.3f} ms")
print(f"Minimum {min(timings):.3f} ms, maximum {max(timings):.3f} ms")
print(f"Approx. throughput: {batch_size / (mean_ms / 1000):.0f} samples/s (from the mean)")

# %% [markdown]
# `everyo.bench.benchmark` does the same in one call, and keeps the raw times, the statistics
# and a record of the environment (versions, CPU, BLAS threads) with the result. Keep the
# workload (model, input, batch size) fixed from here on.
#
# **One model, several latencies.** Each figure in this lab says how it was measured, and they
# differ for that reason: the hand-timed mean above and `benchmark`'s median below (warm-up
# excluded, profiler off) are two runs of the same procedure, minutes apart on a machine whose
# load changes (the `Machine:` line says how busy it was); the profile in section 2 times each
# call with the profiler on and reads per module; section 6 times the two versions in turns.

# %%
with eo.no_grad():
    baseline = benchmark(model, x, warmup=2, repeat=10, samples=batch_size, name="baseline")
print("benchmark(): 10 calls after 2 warm-up calls (not timed), profiler off")
print(baseline)

# %% [markdown]
# ## 2. Profile
#
# `%%everyo_profile` profiles the cell and shows a dashboard that fills in while the cell runs:
#
# - the **flame chart**: time runs left to right, nesting goes down; each bar is one call;
# - the **icicle**: the call tree, each box as wide as its share of the time;
# - the **table**: one row per module class with calls, total (inclusive) and *self* time.
#
# The run is kept in `everyo.profiler.runs` under its label. Its times are with the profiler
# on, over 5 calls and no warm-up: a third procedure, so a third latency, read per module.

# %%
%%everyo_profile --label baseline --top 8
with eo.no_grad():
    for _ in range(5):
        out = model(x)

# %% [markdown]
# ## 3. Read the table: why totals do not add up
#
# Module times are **inclusive**: `Sequential`'s total contains everything called inside it.
# Adding a parent's total to its children's counts the same time twice, so the `total_ms`
# column sums to more than the wall time ("Nested module timing intervals overlap", as the
# guide warns). **Self time** is a module's time minus its children's; self times do not
# overlap.
#
# **Exercise 1.** Which column of the summary adds up to the run's wall time, less the moments
# between calls that no module holds? Set `column`.

# %%
table = analysis.summarize(runs["baseline"])
wall_ms = runs["baseline"].wall_ns / 1e6
print(f"wall time {wall_ms:.1f} ms")
for row in table:
    print(f"{row['name']:<12} total {row['total_ms']:8.2f} ms   self {row['self_ms']:8.2f} ms")

# %% [exercise]
column = "total_ms"  # TODO: the column whose values add up to the wall time

# %% [solution]
column = "self_ms"  # self times do not overlap; inclusive totals count nested time twice

# %% [check]
explained_ms = sum(row[column] for row in table)
# judged by the column, not by how near its sum comes to the wall time: the moments between
# calls (the loop, and whatever else a busy kernel ran meanwhile) belong to no module, and their
# share of a few-ms run varies from run to run
lab.check(
    column == "self_ms",
    f"the {column!r} column sums to {explained_ms:.1f} ms against a wall time of "
    f"{wall_ms:.1f} ms: "
    + (
        "nested intervals overlap, so look for the column that counts each moment once"
        if explained_ms > wall_ms
        else "look for the column that counts each moment once, and every moment of every call"
    ),
    passed=f"{column} sums to {explained_ms:.1f} ms of {wall_ms:.1f} ms wall time; the other "
    f"{max(wall_ms - explained_ms, 0):.1f} ms passed outside every module call",
)

# %% [markdown]
# ## 4. Find the bottleneck
#
# "Optimization should target the dominant source of execution time." The dominant source is
# the module with the most *self* time: `Sequential` has the largest total only because it
# contains everything.
#
# **Exercise 2.** Name the module class that dominates (look at the dashboard's table, or at
# `analysis.top_self(runs["baseline"])`).

# %% [exercise]
bottleneck = "Sequential"  # TODO: the module class with the most self time

# %% [solution]
bottleneck = analysis.top_self(runs["baseline"], k=1)[0]["name"]

# %% [check]
top = analysis.top_self(runs["baseline"], k=1)[0]
lab.check(
    names.matches(bottleneck, top),  # "RowScale" or the dashboard's "RowScale [1]"
    f"{bottleneck!r} is not the module with the most self time; sort the table by self_ms "
    "(a class name, or a label as the table shows it)",
    passed=f"{top['name']} holds {top['self_ms']:.1f} ms of self time",
)

# %% [markdown]
# ## 5. Change one thing
#
# Python overhead from "repeated small operations" is a classic bottleneck: the loop runs a
# handful of tensor operations *per row*. The same arithmetic for all rows at once is a few
# operations in total ("Prefer batch operations over Python loops").
#
# **Exercise 3.** Write `forward` of `RowScaleVectorised` without a loop over rows. Hint:
# `eo.mean(t, axis=1, keepdims=True)` averages each row and keeps the shape broadcastable.
# Nothing else changes: both models share the same `Linear` layers, so their weights are the
# same.

# %% [exercise]
class RowScaleVectorised(eo.Module):
    """The same scaling as RowScale, for all rows at once."""

    def forward(self, x):
        # TODO: replace the row loop below with whole-tensor operations
        rows = [x[i] / eo.sqrt(eo.mean(x[i] * x[i]) + 1e-6) for i in range(x.shape[0])]
        return eo.stack(rows)

# %% [solution]
class RowScaleVectorised(eo.Module):
    """The same scaling as RowScale, for all rows at once."""

    def forward(self, x):
        return x / eo.sqrt(eo.mean(x * x, axis=1, keepdims=True) + 1e-6)

# %%
fast_model = eo.Sequential(first, RowScaleVectorised(), eo.ReLU(), last)
fast_model.eval()

# %% [markdown]
# ## 6. Re-measure, then validate the numerics
#
# Same input, same procedure. `compare` gives the speed-up $S$ with a 95 % confidence
# interval, so noise is not mistaken for an improvement; `interleaved` times the two versions
# in turns (before, after, before, ...) so that a busy machine slows both alike. A speed-up
# only counts if the outputs agree within the guide's float32 tolerances
# (`rtol=1e-5, atol=1e-7`).

# %%
with eo.no_grad():
    optimised = benchmark(
        fast_model, x, warmup=2, repeat=10, samples=batch_size, name="vectorised"
    )
    print(
        f"benchmark() medians, measured one after the other (section 1's, then this one): "
        f"{baseline.median * 1e3:.3f} ms -> {optimised.median * 1e3:.3f} ms "
        f"({baseline.median / optimised.median:.1f}x)"
    )
    speedup = interleaved(model, fast_model, x, warmup=2, repeat=10)
    reference = model(x).numpy()
    candidate = fast_model(x).numpy()
print("interleaved(): the two models in turns, 10 calls each after 2 warm-up calls, profiler off")
print(speedup)

# %% [check]
lab.check(
    speedup.speedup >= 3 and speedup.verdict == "faster",
    f"the speed-up is {speedup.speedup:.3f}x ({speedup.verdict}); vectorise "
    "RowScaleVectorised.forward (no Python loop over rows) to reach at least 3x",
    passed=f"{speedup.speedup:.3f}x faster (interleaved()'s speed-up: the 'Speedup:' line "
    "above)",
    measured=speedup,
)
# np.allclose applies the rule of the guide's np.testing.assert_allclose, as a True/False
error = float(np.abs(reference - candidate).max())
lab.check(
    np.allclose(candidate, reference, rtol=1e-5, atol=1e-7),
    f"the outputs differ from the baseline's by up to {error:.2e}: the change must compute "
    "the same function (check the axis you average over and the 1e-6)",
    passed=f"outputs agree with the baseline (max abs difference {error:.1e})",
)

# %% [markdown]
# Profile the new model too, and compare it with the baseline: `--compare baseline` shows,
# under the new run's dashboard, both flame charts on one time axis (zooming together) and a
# diff table, biggest change first, with a verdict per row ("faster" or "slower";
# "negligible change" for a change beyond noise too small to matter, as the unchanged `ReLU`'s;
# "within noise", from the per-call durations). `everyo_lab.compare("baseline", "vectorised")`
# shows the same view on its own; `analysis.diff` gives the numbers as a table. Its speed-up is
# that of the two profiled cells (profiler on, 5 calls each, minutes apart): a third speed-up
# for the same change, by a third procedure. The one to quote is `interleaved()`'s, since its
# two sides met the same machine.

# %%
%%everyo_profile --label vectorised --compare baseline --top 8
with eo.no_grad():
    for _ in range(5):
        out = fast_model(x)

# %% [markdown]
# ## 7. Record the result
#
# `lab.record` writes `results/01_first_profile.json` next to this notebook (your figures, the
# checks passed and the environment); `everyo_lab.to_html` writes a self-contained report of a
# run that opens offline, without a kernel.

# %%
import everyo_lab

lab.record(
    batch_size=batch_size,
    baseline_ms=baseline.median * 1e3,
    optimised_ms=optimised.median * 1e3,
    speedup=speedup.speedup,
    bottleneck=bottleneck,
)
everyo_lab.to_html(runs["vectorised"], "results/01_first_profile-vectorised.html")

# %% [markdown]
# **Try next:** profile with `--record-ops` to see the tensor operations inside `RowScale`, or
# change `batch_size` and watch how the gap between the two versions grows.
