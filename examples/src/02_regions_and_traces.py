# %% [markdown]
# # Lab 02: regions, schedules and traces
#
# **Goal:** time the stages of a request handler with `record_function`, record only the
# steady-state requests with a schedule, export a Chrome trace, find the slowest stage in the
# trace you load back, and make that stage at least 3× faster with identical predictions.
#
# **Time:** about 40 minutes. **Prerequisites:** lab 01.
#
# **Guide sections:** Profiling API, Custom Profiling Regions, Chrome Trace Export,
# Troubleshooting, Bottleneck Analysis.
#
# Module events tell you which *layer* is slow. Real workloads also spend time outside the
# model: preparing inputs, decoding outputs, logging. `record_function(name, **metadata)` marks
# such a stage as a region of its own, with metadata (batch size, experiment name, stage) that
# travels into the trace. With no profiler active it does nothing, so it can stay in your code.

# %%
from pathlib import Path

import numpy as np

import everyo as eo
from everyo.profiler import analysis, load, profile, record_function, runs, schedule, step
from everyo_lab.labs import interleaved, start_lab

%load_ext everyo_lab

lab = start_lab("02_regions_and_traces", "stages as regions, a schedule, a trace, a 3x stage")
batch_size = lab.pick(small=64, full=256)
Path("results").mkdir(exist_ok=True)

# %% [markdown]
# ## The workload: a small classification service
#
# Each request is a batch of raw features. The handler normalises them (*preprocess*), runs
# the model (*inference*) and turns logits into a label and a confidence per sample
# (*postprocess*).

# %%
model = eo.Sequential(eo.Linear(32, 128, seed=0), eo.ReLU(), eo.Linear(128, 10, seed=1))
model.eval()
rng = np.random.default_rng(0)
requests = [rng.normal(2.0, 3.0, size=(batch_size, 32)).astype(np.float32) for _ in range(10)]
mean, std = requests[0].mean(axis=0), requests[0].std(axis=0)


def preprocess(raw):
    return eo.tensor((raw - mean) / std)


def postprocess(logits):
    """Label and confidence of each sample, one sample at a time."""
    labels, confidences = [], []
    for i in range(logits.shape[0]):
        probs = eo.softmax(logits[i], axis=-1)
        labels.append(int(eo.argmax(probs).item()))
        confidences.append(float(eo.max(probs).item()))
    return np.array(labels), np.array(confidences)

# %% [markdown]
# ## 1. Regions with metadata
#
# **Exercise 1.** Wrap each stage of `handle` in `record_function`, named `"preprocess"`,
# `"inference"` and `"postprocess"`, each with the metadata `batch_size=len(raw)`:
#
# ```python
# with record_function("inference", batch_size=len(raw)):
#     logits = model(x)
# ```

# %% [exercise]
def handle(raw):
    # TODO: put each of the three stages in its own record_function region with batch_size
    x = preprocess(raw)
    with eo.no_grad():
        logits = model(x)
    return postprocess(logits)

# %% [solution]
def handle(raw):
    with record_function("preprocess", batch_size=len(raw)):
        x = preprocess(raw)
    with record_function("inference", batch_size=len(raw)), eo.no_grad():
        logits = model(x)
    with record_function("postprocess", batch_size=len(raw)):
        return postprocess(logits)

# %%
%%everyo_profile --label regions --top 6
for raw in requests[:3]:
    labels, confidences = handle(raw)

# %% [check]
stages = {"preprocess", "inference", "postprocess"}
batch = runs["regions"].snapshot()
user = [i for i in range(len(batch.name)) if batch.kind[i] == "user"]
found = {batch.name[i] for i in user}
sizes = {(batch.metadata[i] or {}).get("batch_size") for i in user}
lab.check(
    found == stages and sizes == {batch_size},
    f"the run has user regions {sorted(found) or 'none'} with batch_size {sorted(map(str, sizes))}"
    f"; wrap preprocess, inference and postprocess in record_function(name, "
    f"batch_size=len(raw))",
    passed="three stages recorded as regions, each with its batch size",
)

# %% [markdown]
# ## 2. Warmup and schedules
#
# The first calls of a workload are often slower (caches, lazy imports, allocations): keep
# them out of a profile. `Profiler(warmup=N)` skips the first *N recorded events*, not N
# iterations, as the guide notes. Skip too many and the profile is empty, the guide's
# troubleshooting case "Profiler returns no events":

# %%
with profile(warmup=1000) as too_much_warmup:
    handle(requests[0])
print(too_much_warmup.summary())

# %% [markdown]
# To skip whole iterations, use a **schedule**: call `step()` at the end of each iteration,
# and the schedule decides which steps are recorded: `wait` steps ignored, `warmup` steps run
# with the profiler but discarded, `active` steps recorded; the cycle then starts again,
# `repeat` times (0: for ever). In a profiled cell the magic takes
# `--schedule WAIT,WARMUP,ACTIVE,REPEAT`.
#
# **Exercise 2.** Of the ten requests, ignore the first two (cold start), warm up on one, and
# record the next three. Change the `--schedule` option of the cell.

# %% [exercise]
%%everyo_profile --label scheduled --schedule 0,0,10,0
# TODO: set --schedule above so that exactly requests 4, 5 and 6 are recorded
for raw in requests:
    handle(raw)
    step()

# %% [solution]
%%everyo_profile --label scheduled --schedule 2,1,3,1
for raw in requests:
    handle(raw)
    step()

# %% [check]
calls = {row["name"]: row["calls"] for row in analysis.summarize(runs["scheduled"])}
lab.check(
    calls.get("inference") == 3,
    f"{calls.get('inference', 0)} requests were recorded, not 3; in --schedule "
    "WAIT,WARMUP,ACTIVE,REPEAT count the ignored, discarded and recorded steps of one cycle, "
    "and remember that REPEAT=0 starts the cycle again for ever",
    passed="the schedule recorded three steady-state requests",
)

# %% [markdown]
# ## 3. Export a trace, open it, load it back
#
# A Chrome trace holds every event with its start, duration, thread and arguments (your
# metadata included). Export the scheduled run, then open it:
#
# - **Perfetto:** go to <https://ui.perfetto.dev>, click *Open trace file* and pick
#   `results/02-requests.trace.json`. Use `W`/`S` to zoom, `A`/`D` to pan, click a slice to
#   see its arguments (`batch_size`, module `path`, `shapes`).
# - **Chrome:** open `chrome://tracing` and *Load* the same file.
#
# The raw JSON export is the same events as a plain list, for your own scripts. Both
# directories must exist before you export ("Chrome trace file cannot be written": check the
# directory and its permissions). `everyo.profiler.load` reads either file back into a run.

# %%
# the same schedule from Python, as in a script: the profiler object has the exports
with profile(schedule=schedule(wait=2, warmup=1, active=3, repeat=1), label="requests") as profiler:
    for raw in requests:
        handle(raw)
        profiler.step()
trace_path = profiler.export_chrome_trace("results/02-requests.trace.json")
raw_path = profiler.export_json("results/02-requests.events.json")
print(Path(raw_path).read_text()[:400], "...")
loaded = load(trace_path)
print(f"loaded {loaded.label!r}: {loaded.num_events} events")

# %% [markdown]
# **Exercise 3.** From the *loaded* run (`analysis.summarize(loaded)`), name the stage that
# dominates the request time.

# %% [exercise]
slowest_stage = "inference"  # TODO: the stage with the largest total time in `loaded`

# %% [solution]
stage_rows = [row for row in analysis.summarize(loaded) if row["kind"] == "user"]
slowest_stage = max(stage_rows, key=lambda row: row["total_ms"])["name"]

# %% [check]
stage_ms = {r["name"]: r["total_ms"] for r in analysis.summarize(loaded) if r["kind"] == "user"}
dominant = max(stage_ms, key=stage_ms.get, default=None)  # None: no regions (exercise 1)
lab.check(
    dominant is not None and slowest_stage == dominant,
    f"{slowest_stage!r} is not the slowest stage in the trace; compare the total_ms of the "
    "user regions"
    if stage_ms
    else "the trace has no user regions yet: wrap the stages of handle (exercise 1) first",
    passed=f"{dominant} takes {stage_ms.get(dominant, 0.0):.1f} of "
    f"{sum(stage_ms.values()):.1f} ms in the three stages",
)

# %% [markdown]
# ## 4. Change one thing, re-measure, validate
#
# `postprocess` runs three small tensor operations per sample. Whole-batch operations take an
# `axis`: `eo.softmax(t, axis=-1)`, `eo.argmax(t, axis=1)`, `eo.max(t, axis=1)`.
#
# **Exercise 4.** Write `postprocess_fast` without a loop over samples. It must return the
# same labels and (within float32 tolerance) the same confidences, as NumPy arrays.

# %% [exercise]
def postprocess_fast(logits):
    # TODO: the same result with whole-batch operations, no loop over samples
    return postprocess(logits)

# %% [solution]
def postprocess_fast(logits):
    probs = eo.softmax(logits, axis=-1)
    return eo.argmax(probs, axis=1).numpy(), eo.max(probs, axis=1).numpy()

# %%
with eo.no_grad():
    logits = model(preprocess(requests[0]))
stage_speedup = interleaved(postprocess, postprocess_fast, logits, warmup=2, repeat=10)
print(stage_speedup)
labels_ref, conf_ref = postprocess(logits)
labels_new, conf_new = postprocess_fast(logits)

# %% [check]
lab.check(
    stage_speedup.speedup >= 3 and stage_speedup.verdict == "faster",
    f"postprocess_fast is {stage_speedup.speedup:.1f}x as fast as postprocess; remove the "
    "per-sample loop to reach 3x",
    passed=f"postprocess is {stage_speedup.speedup:.1f}x faster",
    measured=stage_speedup,
)
lab.check(
    np.array_equal(labels_ref, labels_new)
    and np.allclose(conf_new, conf_ref, rtol=1e-5, atol=1e-7),
    "postprocess_fast must give the same labels and confidences as postprocess",
    passed="same labels, confidences within rtol=1e-5, atol=1e-7",
)

# %% [markdown]
# ## 5. Record the result

# %%
lab.record(
    batch_size=batch_size,
    slowest_stage=slowest_stage,
    stage_ms=stage_ms,
    postprocess_speedup=stage_speedup.speedup,
    trace=str(trace_path),
)

# %% [markdown]
# **Try next:** profile `handle` with `postprocess_fast` under the same schedule and open both
# traces in Perfetto side by side; add `experiment="fast"` to the regions' metadata and find
# it in the slice arguments.
