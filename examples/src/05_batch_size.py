# %% [markdown]
# # Lab 05: choosing a batch size
#
# **Goal:** sweep batch sizes with the sweep widget, read throughput, latency and memory
# against batch size, predict the out-of-memory boundary from bytes per sample, and choose the
# batch size with the best throughput within a latency budget.
#
# **Time:** about 40 minutes. **Prerequisites:** lab 01.
#
# **Guide sections:** Batch Size Optimization, Inference Optimization, Memory Optimization,
# Performance Metrics.
#
# A larger batch spreads each call's fixed cost over more samples, so **throughput** (samples/s)
# rises, until the hardware is busy. But each call takes longer, so the **latency** a single
# request sees rises too, and so does the **memory** a call needs. "A larger batch may improve
# aggregate throughput while increasing latency for an individual request. Choose according to
# application requirements." A sweep measures all three; you choose.

# %%
from pathlib import Path

import everyo as eo
import everyo_lab
from everyo_lab.labs import start_lab

%load_ext everyo_lab

lab = start_lab("05_batch_size", "throughput, latency and memory against batch size")
repeat = lab.pick(small=5, full=20)
Path("results").mkdir(exist_ok=True)

model = eo.Sequential(eo.Linear(32, 256, seed=0), eo.ReLU(), eo.Linear(256, 10, seed=1))
model.eval()  # inference: evaluation mode, and the sweep runs the model under eo.no_grad()


def make_batch(batch_size):
    return eo.randn(batch_size, 32, seed=batch_size)

# %% [markdown]
# ## 1. Sweep
#
# `%everyo_sweep MODEL MAKE_BATCH` measures the model at each batch size (warmup, then
# `repeat` timed calls) with `everyo.bench.sweep_batch_sizes`, and draws each point as it is
# measured: throughput, latency (median with a p5–p95 band) and peak memory against batch size
# (log₂ axis), then recommends the smallest batch within 5 % of the best throughput.
# Interrupt the kernel to stop early: the finished points are kept.

# %%
%everyo_sweep model make_batch --batch-sizes 1,4,16,64,256,1024 --warmup 2 --repeat $repeat --label inference

# %%
result = everyo_lab.sweeps["inference"].result  # an everyo.bench.SweepResult
print(result)

# %% [markdown]
# **Can you trust these points?** The first line under the table says what the machine did
# while the sweep measured: `quiet`, `busy` (other processes used some cores; ours had cores of
# their own, or ran on one BLAS thread, which takes turns with theirs and is only slower) or
# `contended` (our several BLAS threads shared cores with other processes). On a shared
# JupyterHub another student's kernel doing matrix products can make a single point 100× slower
# than its neighbours: OpenBLAS's threads spin waiting for each other while the other kernel
# runs. So the sweep limits BLAS threads to the cores other processes leave free
# (`--threads auto`, the default), re-measures any point that breaks from its neighbours
# (interleaved with them), and marks a point that stays inconsistent **unreliable** and one
# measured on a contended machine **contended**. A point that re-measures the same but stays
# off its neighbours is **off-trend**: not noise, but something this machine really does at
# that size, and its note says what (often page faults: the allocator gives a large buffer back
# to the system after each call, and the next call touches fresh pages). All three are ringed
# on the charts, and none is ever recommended: the recommendation line names them. When one
# of them measured as fast as the recommended point or faster, the line calls the
# recommendation **provisional** (`result.conclusive` is False): rerun the sweep. If the recommendation line says it left points out, rerun the cell when the
# machine is quieter, or with `--threads 1`. `row.trusted` tells you in code.

# %% [markdown]
# ## 2. Memory grows with the batch
#
# The guide's dense-tensor rule is $M = N \times B$: elements times bytes per element. A
# batch of `n` samples holds `n` inputs and `n` rows of every activation, so peak memory grows
# by a fixed number of **bytes per sample** (model weights are a constant on top).
#
# **Exercise 1.** Compute `bytes_per_sample` from the peak memory (`result[n].peak_memory`,
# bytes) of the sweep's points at batch 256 and 1024.

# %% [exercise]
bytes_per_sample = 0  # TODO: the slope of peak memory against batch size

# %% [solution]
bytes_per_sample = (result[1024].peak_memory - result[256].peak_memory) / (1024 - 256)

# %% [check]
slope = (result[1024].peak_memory - result[256].peak_memory) / (1024 - 256)
values = round(slope / 4)
at_peak = {544: "the input and both hidden ones, alive together; the output comes once the "
           "first hidden one is freed", 554: "all of them at once"}
lab.check(
    abs(bytes_per_sample - slope) <= 0.02 * slope,
    f"bytes_per_sample={bytes_per_sample:.0f}; divide the growth of peak_memory from 256 to "
    "1024 by the growth of the batch",
    passed=f"{slope:.0f} bytes per sample, {values} float32 values held at the peak (per "
    "sample the activations are the input 32, the hidden 256, the ReLU's 256 and the output "
    f"10, 554 in all; at the peak: {at_peak.get(values, 'some of them')})",
)

# %% [markdown]
# On a GPU the largest batch is set by device memory. `--memory-limit BYTES` reproduces such a
# boundary on a CPU: a point whose peak exceeds it is marked out of memory (OOM), and the
# memory it used is released. With `--batch-sizes auto` the sweep doubles the batch until a
# point runs out of memory, then narrows down the boundary. Predict it first:

# %%
memory_limit = 3_000_000
if bytes_per_sample > 0:
    predicted = int((memory_limit - result[256].peak_memory) / bytes_per_sample) + 256
    print(f"predicted largest batch under {memory_limit / 2**20:.2f} MiB: about {predicted}")
else:
    predicted = None
    print("no prediction yet: compute bytes_per_sample (exercise 1) first")

# %%
%everyo_sweep model make_batch --batch-sizes auto --warmup 1 --repeat 2 --memory-limit $memory_limit --label limited

# %%
limited = everyo_lab.sweeps["limited"].result
print(f"largest that fits: {limited.largest_fit.batch_size} (predicted {predicted})")

# %% [markdown]
# ## 3. A latency budget
#
# A service answers requests in batches; its requirement is that 95 % of batches finish within
# `budget_ms`. The best batch size is then the one with the **highest throughput among those
# whose p95 latency is within the budget**, not the largest one, and not always the sweep's
# recommendation (which ignores latency).
#
# **Exercise 2.** Choose `chosen_batch` from `result.rows` (each row has `batch_size`,
# `status`, `p95_ms`, `throughput`, and `trusted`: measured, consistent, not contended).

# %%
budget_ms = 1.5 * result[64].p95_ms
print(f"latency budget: {budget_ms:.3f} ms per batch")

# %% [exercise]
chosen_batch = max(row.batch_size for row in result.rows)  # TODO: best throughput in budget

# %% [solution]
in_budget = [r for r in result.rows if r.trusted and r.p95_ms <= budget_ms]
chosen_batch = max(in_budget, key=lambda r: r.throughput).batch_size if in_budget else None

# %% [check]
fits = [r for r in result.rows if r.trusted and r.p95_ms <= budget_ms]
measured = {r.batch_size: r for r in result.rows}
seen = (
    f"p95 {measured[chosen_batch].p95_ms:.3f} ms, {measured[chosen_batch].throughput:.0f} "
    "samples/s" if chosen_batch in measured else "not a batch size of the sweep"
)
if not fits:  # the machine left no trusted point within the budget: nothing to judge
    lab.inconclusive(
        f"no trusted point has p95_ms <= {budget_ms:.3f} "
        f"(not trusted: {', '.join(f'{r.batch_size} ({r.flag})' for r in result.flagged_rows)})",
        "rerun the sweep in section 1 when the machine is quieter, then this cell",
    )
else:
    best = max(fits, key=lambda r: r.throughput)
    lab.check(
        chosen_batch == best.batch_size,
        f"batch {chosen_batch} ({seen}) is not the best choice: among the trusted rows with "
        f"p95_ms <= {budget_ms:.3f}, take the one with the highest throughput",
        passed=f"batch {best.batch_size}: p95 {best.p95_ms:.3f} ms within {budget_ms:.3f} ms, "
        f"{best.throughput:.0f} samples/s",
        measured=result,  # untrusted points as fast as the best: the choice is provisional
    )

# %% [markdown]
# ## 4. The widget in the background, and the profile at the chosen size
#
# `everyo_lab.SweepWidget` takes `sweep_batch_sizes`'s arguments. Its **Run** button (or
# `start()`) measures on a background thread, so the notebook stays usable; **Stop** ends the
# sweep after the current point and keeps the finished ones; `wait()` blocks until it ends.
# Export the points with its buttons, or `to_csv()` / `to_json()`.

# %%
# (batch 64 when exercise 2 chose nothing the sweep measured)
center = chosen_batch if chosen_batch in {r.batch_size for r in result.rows} else 64
widget = everyo_lab.SweepWidget(
    model, make_batch, batch_sizes=[center // 2 or 1, center, center * 2],
    warmup=1, repeat=repeat, label="around-the-choice",
)
widget.show()
widget.start()

# %%
around = widget.wait()
widget.to_csv("results/05-around-the-choice.csv")
print(around)

# %% [markdown]
# Where does the time go at the chosen size? Nested (inclusive) times overlap; self time does
# not.

# %%
xb = make_batch(center)

# %%
%%everyo_profile --label chosen-batch --top 6
with eo.no_grad():
    for _ in range(20):
        model(xb)

# %% [markdown]
# ## 5. Record the result

# %%
result.to_json("results/05-inference-sweep.json")
lab.record(
    recommended=result.recommended.batch_size if result.recommended else None,
    recommendation_conclusive=result.conclusive,
    untrusted_points=[r.batch_size for r in result.flagged_rows],
    largest_fit=limited.largest_fit.batch_size,
    predicted_largest_fit=predicted,
    bytes_per_sample=bytes_per_sample,
    budget_ms=budget_ms,
    chosen_batch=chosen_batch,
)

# %% [markdown]
# **Try next:** sweep the training step (`--mode train` with a step that runs forward, loss,
# backward and the optimizer): memory per sample grows with the saved activations and the
# gradients. Tools such as Optuna search such system knobs (batch size, prefetch depth)
# automatically when latency is the metric.
