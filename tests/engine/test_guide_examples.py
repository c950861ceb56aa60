"""The performance guide's model, inference, DataLoader, batch-size, training-throughput and
"Complete Benchmark Example" code, copied verbatim (indentation restored), run as written."""

from __future__ import annotations

import math
import re
import textwrap


def run(code: str) -> dict:
    namespace: dict = {"__name__": "__guide__"}
    exec(compile(textwrap.dedent(code), "<guide>", "exec"), namespace)
    return namespace


INFERENCE = """
import everyo as eo
model = eo.Sequential(
    eo.Linear(4, 8, seed=0),
    eo.ReLU(),
    eo.Linear(8, 2, seed=1)
)
model.eval()
x = eo.zeros(32, 4)
with eo.no_grad():
    predictions = model(x)
"""


def test_inference_optimization_example():
    ns = run(INFERENCE)
    predictions, model = ns["predictions"], ns["model"]
    assert predictions.shape == (32, 2) and not predictions.requires_grad
    assert not model.training and not any(m.training for m in model.modules())


PROFILE_MODEL = """
import everyo as eo
model = eo.Sequential(
    eo.Linear(4, 16, seed=0),
    eo.ReLU(),
    eo.Linear(16, 2, seed=1)
)
x = eo.zeros(32, 4)
"""


def test_model_definition_of_the_profiling_examples():
    ns = run(PROFILE_MODEL)
    out = ns["model"](ns["x"])
    assert out.shape == (32, 2)
    again = run(PROFILE_MODEL)["model"]
    for (_, a), (_, b) in zip(ns["model"].named_parameters(), again.named_parameters()):
        assert (a.numpy() == b.numpy()).all()  # seed=0/1: identical weights every run


DATALOADER = """
import numpy as np
import everyo as eo
features = np.random.default_rng(42).normal(
    size=(10000, 32)
).astype(np.float32)
targets = np.zeros(
    10000,
    dtype=np.int64
)
dataset = eo.ArrayDataset(
    features,
    targets
)
loader = eo.DataLoader(
    dataset,
    batch_size=128,
    shuffle=True,
    seed=42
)
"""


def test_dataloader_example_and_batch_size_section():
    ns = run(DATALOADER)
    loader = ns["loader"]
    assert loader.fast_path  # "a fast path for ArrayDataset ... batches samples using indexing"
    # Batch Size Optimization: ceil(N / B) batches when the final partial batch is retained
    assert len(loader) == math.ceil(10000 / 128) == 79
    sizes = [len(x) for x, _ in loader]
    assert sizes == [128] * 78 + [10000 - 78 * 128]
    x, y = next(iter(loader))
    assert x.shape == (128, 32) and x.dtype == "float32" and y.dtype == "int64"


def test_training_throughput_definition_matches_history():
    # "If 10,000 samples are processed in 20 seconds: Throughput = 500 samples/s"
    assert 10000 / 20 == 500
    ns = run(DATALOADER)
    import everyo as eo

    model = eo.Sequential(eo.Linear(32, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
    trainer = eo.Trainer(model, eo.optim.SGD(model.parameters(), lr=0.01), eo.CrossEntropyLoss())
    rec = trainer.fit(ns["loader"], epochs=1, progress=False).last
    # the guide's "Record" list: samples/s, time per epoch, average batch time, peak memory
    assert rec["samples_per_s"] == rec["samples"] / rec["epoch_time_s"]
    assert rec["mean_batch_time_ms"] == 1000 * rec["epoch_time_s"] / 79
    assert rec["samples"] == 10000 and rec["peak_host_mib"] > 0


COMPLETE_BENCHMARK = """
import time
import statistics
import everyo as eo
model = eo.Sequential(
    eo.Linear(32, 64, seed=0),
    eo.ReLU(),
    eo.Linear(64, 16, seed=1)
)
model.eval()
x = eo.zeros(128, 32)
warmup_iterations = 10
measured_iterations = 100
with eo.no_grad():
    # Warmup
    for _ in range(warmup_iterations):
        model(x)
    # Timed runs
    timings = []
    for _ in range(measured_iterations):
        start = time.perf_counter()
        output = model(x)
        elapsed = time.perf_counter() - start
        timings.append(elapsed * 1000)
mean_ms = statistics.mean(timings)
median_ms = statistics.median(timings)
minimum_ms = min(timings)
maximum_ms = max(timings)
throughput = 128 / (mean_ms / 1000)
print(f"Mean latency: {mean_ms:.4f} ms")
print(f"Median latency: {median_ms:.4f} ms")
print(f"Minimum latency: {minimum_ms:.4f} ms")
print(f"Maximum latency: {maximum_ms:.4f} ms")
print(f"Approx. throughput: {throughput:.2f} samples/s")
"""


def test_complete_benchmark_example(capsys):
    ns = run(COMPLETE_BENCHMARK)
    out = capsys.readouterr().out.splitlines()
    labels = ["Mean latency", "Median latency", "Minimum latency", "Maximum latency",
              "Approx. throughput"]  # fmt: skip
    assert [line.split(":")[0] for line in out] == labels
    assert all(re.fullmatch(r"[\w. ]+: \d+\.\d+ (ms|samples/s)", line) for line in out)
    assert len(ns["timings"]) == 100 and ns["output"].shape == (128, 16)
    assert ns["minimum_ms"] <= ns["median_ms"] <= ns["maximum_ms"]
