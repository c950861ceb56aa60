# %% [markdown]
# # Lab 07: CPU and CUDA
#
# **Goal:** choose a device with `device("auto")`, move data to it once instead of every step
# (≥ 2× faster, same outputs), and time asynchronous device work correctly: synchronise before
# you read the clock.
#
# **Time:** about 40 minutes. **Prerequisites:** labs 01 and 03. Runs on a CPU; on a machine
# with an NVIDIA GPU and CuPy (`pip install everyo[cuda12]`) the GPU cells run too.
#
# **Guide sections:** CPU Execution, CUDA Execution, Benchmarking Methodology,
# Troubleshooting.
#
# A GPU runs work *asynchronously*: the host queues a kernel and goes on at once; the GPU
# runs it later. Two consequences for performance work:
#
# 1. Moving data between host memory and device memory costs time (the **transfer cost**).
#    Keep tensors on the device where they are used; move them once.
# 2. A clock read on the host right after a launch measures the *launch*, not the work. Wait
#    for the device (synchronise) before reading the clock, or time with device events.

# %%
import time
import warnings

import numpy as np

import everyo as eo
from everyo.bench import benchmark
from everyo.core.device import device
from everyo_lab.labs import interleaved, start_lab

lab = start_lab("07_cpu_vs_cuda", "devices, transfers, and timing asynchronous work")
GPU = eo.cuda.is_available()
dev = device("auto")  # CUDA when CuPy sees a GPU, else the CPU, silently
print("execution device:", dev, "| GPU present:", GPU)
n_rows = lab.pick(small=4096, full=16384)

# %% [markdown]
# ## 1. Asking for a device
#
# `device("cuda")` without a usable GPU falls back to the CPU with one warning;
# `device("cuda", strict=True)` raises instead, for code that must not silently run on the
# CPU (the guide's troubleshooting case "CUDA request falls back to CPU": run
# `python -m everyo doctor` to see why).

# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    print("device('cuda') ->", device("cuda"), [str(w.message)[:80] for w in caught])
try:
    print("strict:", device("cuda", strict=True))
except eo.EveryODeviceError as exc:
    print("strict mode raised:", exc)

# %% [markdown]
# ## 2. Transfers: move data once
#
# `score_naive` converts the whole host array to a tensor on the device *for every batch*,
# and copies every batch's result back to the host at once. On a GPU each conversion is a
# host-to-device copy over PCIe; on the CPU it is still a copy of the whole array per batch
# ("Avoid repeated conversions").

# %%
rng = np.random.default_rng(0)
features = rng.standard_normal((n_rows, 256)).astype(np.float32)
model = eo.Sequential(eo.Linear(256, 32, seed=0), eo.ReLU(), eo.Linear(32, 8, seed=1))
model.to(dev)
model.eval()
batch = 256


def score_naive(features):
    outputs = []
    with eo.no_grad():
        for start in range(0, len(features), batch):
            data = eo.tensor(features, device=dev)  # the whole array, every batch
            outputs.append(model(data[start : start + batch]).numpy())  # back every batch
    return np.concatenate(outputs)

# %% [markdown]
# **Exercise 1.** Write `score_once`: one conversion to the device before the loop, results
# kept on the device (`eo.concatenate`) and copied back once at the end.

# %% [exercise]
def score_once(features):
    # TODO: move `features` to the device once, and bring the results back once
    return score_naive(features)

# %% [solution]
def score_once(features):
    data = eo.tensor(features, device=dev)
    with eo.no_grad():
        outputs = [model(data[s : s + batch]) for s in range(0, len(features), batch)]
        return eo.concatenate(outputs).numpy()

# %%
transfer_speedup = interleaved(score_naive, score_once, features, warmup=1, repeat=7)
print(transfer_speedup)
same = np.allclose(score_once(features), score_naive(features), rtol=1e-5, atol=1e-7)

# %% [check]
lab.check(
    transfer_speedup.speedup >= 2,
    f"score_once is {transfer_speedup.speedup:.1f}x as fast; convert and move the data once, "
    "outside the loop, to reach 2x",
    passed=f"{transfer_speedup.speedup:.1f}x faster with one transfer each way",
    measured=transfer_speedup,
)
lab.check(same, "score_once must return the same scores as score_naive", passed="same scores")

# %% [markdown]
# ## 3. Timing asynchronous work
#
# On a GPU, `y = a @ b` returns as soon as the kernel is *queued*. To show what that does to
# a timer on any machine, `queue` below is a device that works the same way: `launch(work)`
# returns at once and a worker runs the work later; `synchronize()` waits until all queued work
# is done. On a GPU the same cells use the real device: launching CuPy kernels, and
# `eo.cuda.synchronize()`.

# %%
import queue as _queue
import threading


class AsyncDevice:
    """A stand-in for a GPU stream: work runs in order on a worker thread."""

    def __init__(self):
        self._work = _queue.Queue()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while True:
            work = self._work.get()
            work()
            self._work.task_done()

    def launch(self, work):
        self._work.put(work)

    def synchronize(self):
        self._work.join()


if GPU:
    import cupy

    a = eo.randn(4096, 4096, device="cuda", seed=0)
    b = eo.randn(4096, 4096, device="cuda", seed=1)

    def run():  # a few large matrix products, queued on the GPU
        for _ in range(8):
            eo.matmul(a, b)

    synchronize = eo.cuda.synchronize
    run()  # warm up: the first product also creates cuBLAS's handle and loads its kernels
    synchronize()
    start_event, end_event = cupy.cuda.Event(), cupy.cuda.Event()
    start_event.record()
    run()
    end_event.record()
    end_event.synchronize()
    expected_s = cupy.cuda.get_elapsed_time(start_event, end_event) / 1e3  # device events
else:
    stand_in = AsyncDevice()
    expected_s = 0.05

    def run():
        stand_in.launch(lambda: time.sleep(expected_s))  # the device is busy for 50 ms

    synchronize = stand_in.synchronize

print(f"the work takes {expected_s * 1e3:.1f} ms on the device")
start = time.perf_counter()
run()
print(f"host clock without synchronising: {(time.perf_counter() - start) * 1e3:.2f} ms (a lie)")
synchronize()

# %% [markdown]
# **Exercise 2.** Fix `time_it(run, synchronize)`: it must return the time the *work* takes.
# Synchronise before you start the clock (so earlier queued work is not counted) and before
# you read it (so this work is).

# %% [exercise]
def time_it(run, synchronize):
    # TODO: synchronise at the right two places
    start = time.perf_counter()
    run()
    return time.perf_counter() - start

# %% [solution]
def time_it(run, synchronize):
    synchronize()
    start = time.perf_counter()
    run()
    synchronize()
    return time.perf_counter() - start

# %%
run()  # earlier work still queued when time_it starts
measured_s = time_it(run, synchronize)
synchronize()
print(f"time_it: {measured_s * 1e3:.1f} ms; the device says {expected_s * 1e3:.1f} ms")

# %% [check]
lab.check(
    0.8 * expected_s <= measured_s <= 1.6 * expected_s,
    f"time_it measured {measured_s * 1e3:.1f} ms for work that takes {expected_s * 1e3:.1f} ms:"
    " call synchronize() before starting the clock and before reading it",
    passed=f"{measured_s * 1e3:.1f} ms measured for {expected_s * 1e3:.1f} ms of device work",
)

# %% [markdown]
# `everyo.bench.benchmark` does this for you: with `sync="auto"` it synchronises CUDA around
# every timed call when an argument, the result or a model's parameters live on a GPU. The
# profiler records CUDA events around module calls on a GPU and reports `device_ms` next to
# host times.
#
# ## 4. Is the GPU faster? Measure it
#
# "Never assume CUDA is faster for every workload." A small matrix product is over before a
# kernel launch and a transfer pay off; a large one is where a GPU shines.

# %%
results = {}
for n in (64, lab.pick(small=512, full=2048)):
    x_host = eo.randn(n, n, seed=0)
    cpu_time = benchmark(eo.matmul, x_host, x_host, warmup=2, repeat=10, name=f"cpu {n}")
    line = f"matmul {n}x{n}: CPU median {cpu_time.median * 1e3:.3f} ms"
    if GPU:
        x_dev = x_host.to("cuda")
        gpu_time = benchmark(eo.matmul, x_dev, x_dev, warmup=2, repeat=10, name=f"gpu {n}")
        results[n] = cpu_time.median / gpu_time.median
        line += f", GPU median {gpu_time.median * 1e3:.3f} ms ({results[n]:.1f}x)"
        moved = benchmark(lambda: x_host.to("cuda"), warmup=2, repeat=10, name="to cuda")
        line += f", host->device copy {moved.median * 1e3:.3f} ms"
    print(line)
if not GPU:
    print(
        "No GPU here. On one, the 64x64 product is usually no faster than on the CPU (launch "
        "and transfer dominate) while the large one is many times faster; the copy of the "
        "input to the device can cost more than the product itself."
    )

# %% [markdown]
# ## 5. Record the result

# %%
lab.record(
    device=str(dev),
    gpu=GPU,
    transfer_speedup=transfer_speedup.speedup,
    measured_ms=measured_s * 1e3,
    expected_ms=expected_s * 1e3,
    gpu_speedups=results,
)
