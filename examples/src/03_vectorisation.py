# %% [markdown]
# # Lab 03: vectorisation
#
# **Goal:** replace Python loops over rows with whole-tensor operations and reach a measured
# speed-up of at least 10× with the same outputs.
#
# **Time:** about 40 minutes. **Prerequisites:** lab 01.
#
# **Guide sections:** CPU Execution, Tensor Computation Efficiency, Bottleneck Analysis,
# Performance Metrics.
#
# Every tensor operation costs a fixed amount of Python work (checking arguments, dispatching,
# recording the autograd node) before NumPy does the arithmetic. Called once per row, that fixed
# cost dominates: the workload is bound by *Python overhead*, not by compute. One operation
# on the whole batch pays the fixed cost once and lets NumPy's compiled loops (and the CPU's
# wide vector registers) do the rest: that is **vectorisation**.

# %%
import numpy as np

import everyo as eo
from everyo.bench import benchmark, compare
from everyo.core.device import device
from everyo.profiler import analysis, hot_lines, record_function, runs
from everyo_lab.labs import interleaved, start_lab

%load_ext everyo_lab

lab = start_lab("03_vectorisation", "a 10x speed-up from removing row loops, same outputs")
rows = lab.pick(small=128, full=2048)
points = lab.pick(small=32, full=128)
print(device("cpu"))  # the guide's CPU device: tensors are NumPy arrays here

# %% [markdown]
# ## The workload: a scoring layer written row by row
#
# For each input row, `score_rows` computes a hidden layer with a ReLU, then a softmax over the
# outputs.

# %%
rng = np.random.default_rng(0)
X = eo.tensor(rng.standard_normal((rows, 32)).astype(np.float32))
W1 = eo.tensor(rng.standard_normal((32, 64)).astype(np.float32) * 0.2)
b1 = eo.tensor(np.zeros(64, dtype=np.float32))
W2 = eo.tensor(rng.standard_normal((64, 10)).astype(np.float32) * 0.2)


def score_rows(X):
    out = []
    for i in range(X.shape[0]):
        h = eo.relu(X[i] @ W1 + b1)
        out.append(eo.softmax(h @ W2, axis=-1))
    return eo.stack(out)


baseline = benchmark(score_rows, X, warmup=1, repeat=5, samples=rows, name="row loop")
print(baseline)

# %% [markdown]
# ## 1. Profile the operations
#
# `--record-ops` records every tensor operation, with its shapes and the floating-point
# operations (FLOPs) it does. A matrix product of an $m \times k$ by a $k \times n$ matrix
# does about $2mkn$ FLOPs, the guide's $O(mkn)$.

# %%
%%everyo_profile --label loop --record-ops --top 8
scores = score_rows(X)

# %% [markdown]
# **Exercise 1.** How many tensor operations does `score_rows` run *per row*? Compute it from
# the op rows of the profile (`kind == "op"`), not by counting the code.

# %% [exercise]
op_rows = [row for row in analysis.summarize(runs["loop"]) if row["kind"] == "op"]
ops_per_row = 0  # TODO: the number of op calls in the run divided by the number of rows

# %% [solution]
op_rows = [row for row in analysis.summarize(runs["loop"]) if row["kind"] == "op"]
ops_per_row = sum(row["calls"] for row in op_rows) / rows

# %% [check]
actual = sum(row["calls"] for row in op_rows) / rows
lab.check(
    abs(ops_per_row - actual) < 0.5,
    f"ops_per_row is {ops_per_row}; add up the 'calls' of the op rows and divide by "
    f"rows={rows}",
    passed=f"{actual:.0f} operations per row, {actual * rows:.0f} in all: Python overhead",
)

# %% [markdown]
# **Which line?** The op rows say *how many* operations run; sampled stacks say *which line*
# spends the time. `--sample 0.5` records the Python stack every 0.5 ms, and
# `hot_lines(run, "score")` reads the samples taken inside the `score` region, line by line.
# everyo's own frames are folded, so a sample taken inside a tensor operation counts for the
# line of *your* code that called it. One pass over the rows is over in a few milliseconds, a
# handful of samples, so the region scores them `passes` times: a few hundred samples, enough
# for the shares to hold from one run to the next (`print(hot)` says how many there were).

# %%
passes = lab.pick(small=40, full=4)

# %%
%%everyo_profile --label loop-lines --sample 0.5 --no-live --top 3
with record_function("score"):
    for _ in range(passes):
        scores = score_rows(X)

# %%
hot = hot_lines(runs["loop-lines"], "score")
print(hot)

# %% [markdown]
# **Exercise 1b.** Which line of `score_rows` spends the most time itself? Take it from the hot
# lines (`hot.lines`: one dict per line, by `self_share`, with its `function` and `source`),
# not from reading the code.

# %% [exercise]
hot_line = ""  # TODO: the `source` of the hottest line whose function is score_rows

# %% [solution]
hot_line = next(r for r in hot.lines if r["function"] == "score_rows")["source"]

# %% [check]
top = next((r for r in hot.lines if r["function"] == "score_rows"), None)
lab.check(
    top is not None and hot_line.strip() == top["source"] and "for i in" not in top["source"],
    "no sample fell inside score_rows: run the profiling cell again (on a busy machine the "
    "sampler can miss a short region)"
    if top is None
    else "hot_line must be the `source` of the first row of hot.lines whose function is "
    f"score_rows (it is {top['source']!r})",
    passed=top
    and f"{top['self_share']:.0%} of the time on `{top['source']}`, once per row: "
    "the loop body, not the arithmetic, is the cost",
)

# %% [markdown]
# ## 2. Vectorise
#
# **Exercise 2.** Write `score_all` with the same arithmetic for all rows at once: `X @ W1`
# multiplies every row, `+ b1` broadcasts, and `eo.softmax(..., axis=-1)` normalises each row.

# %% [exercise]
def score_all(X):
    # TODO: the same result as score_rows, without a Python loop over rows
    return score_rows(X)

# %% [solution]
def score_all(X):
    return eo.softmax(eo.relu(X @ W1 + b1) @ W2, axis=-1)

# %%
speedup = interleaved(score_rows, score_all, X, warmup=1, repeat=5)
print(speedup)
reference, candidate = score_rows(X).numpy(), score_all(X).numpy()

# %% [check]
lab.check(
    np.allclose(candidate, reference, rtol=1e-5, atol=1e-7),
    "score_all must compute the same scores as score_rows (rtol=1e-5, atol=1e-7)",
    passed="same scores as the row loop",
)
lab.check(
    speedup.speedup >= 10,
    f"score_all is {speedup.speedup:.1f}x as fast as the loop; the bar is 10x: no Python "
    "loop over rows",
    passed=f"{speedup.speedup:.0f}x faster ({rows} rows)",
    measured=speedup,
)

# %% [markdown]
# The op count tells the story: profile the new version and compare the number of operations
# and the achieved GFLOP/s (`gflops` in the table).

# %%
%%everyo_profile --label vectorised --record-ops --top 8
scores = score_all(X)

# %%
for label in ("loop", "vectorised"):
    ops = [r for r in analysis.summarize(runs[label]) if r["kind"] == "op"]
    flops = sum(r["flops"] for r in ops if r["flops"] > 0)
    ms = runs[label].wall_ns / 1e6
    print(f"{label:>10}: {sum(r['calls'] for r in ops):6d} ops, {flops / ms / 1e6:7.3f} GFLOP/s")

# %% [markdown]
# ## 3. A double loop: pairwise distances
#
# `pairwise_loop` computes the squared distance between every point of `A` and every point of
# `B`, one pair at a time. Broadcasting does it in one expression:
# `A[:, None, :] - B[None, :, :]` has shape `(n, m, d)`, one difference vector per pair.
#
# "Avoid unnecessary intermediate tensors": that `(n, m, d)` intermediate is `d` times larger
# than the result. The identity $|a-b|^2 = |a|^2 + |b|^2 - 2\,a \cdot b$ needs only a matrix
# product, but it subtracts large numbers, so check its numerics before you trust it.
#
# **Exercise 3.** Write `pairwise_fast`, with no Python loop, equal to `pairwise_loop` within
# `rtol=1e-4, atol=1e-4` (distances here are around 30, where float32 rounding is about 1e-5).

# %%
A = eo.tensor(rng.standard_normal((points, 16)).astype(np.float32))
B = eo.tensor(rng.standard_normal((points, 16)).astype(np.float32))


def pairwise_loop(A, B):
    out = np.empty((A.shape[0], B.shape[0]), dtype=np.float32)
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            diff = A[i] - B[j]
            out[i, j] = (diff * diff).sum().item()
    return eo.tensor(out)

# %% [exercise]
def pairwise_fast(A, B):
    # TODO: squared distances of all pairs at once (broadcasting or the matmul identity)
    return pairwise_loop(A, B)

# %% [solution]
def pairwise_fast(A, B):
    diff = A[:, None, :] - B[None, :, :]
    return (diff * diff).sum(axis=-1)

# %%
pair_speedup = interleaved(pairwise_loop, pairwise_fast, A, B, warmup=1, repeat=3)
print(pair_speedup)
d_ref, d_new = pairwise_loop(A, B).numpy(), pairwise_fast(A, B).numpy()

# %% [check]
lab.check(
    d_new.shape == d_ref.shape and np.allclose(d_new, d_ref, rtol=1e-4, atol=1e-4),
    f"pairwise_fast must return the {d_ref.shape} squared distances of pairwise_loop",
    passed=f"same distances (max abs difference {np.abs(d_new - d_ref).max():.1e})",
)
lab.check(
    pair_speedup.speedup >= 10,
    f"pairwise_fast is {pair_speedup.speedup:.1f}x as fast as the double loop; reach 10x",
    passed=f"{pair_speedup.speedup:.0f}x faster on {points}x{points} pairs",
    measured=pair_speedup,
)

# %% [markdown]
# ## 4. Record the result
#
# Also worth a line in your notes: the dtype. float64 halves how many numbers fit in a vector
# register and in the cache, so use the dtype the task needs ("Use appropriate array dtypes").

# %%
X64 = X.to(dtype="float64")
dtype_ratio = compare(
    benchmark(score_all, X64, warmup=2, repeat=10, name="float64"),
    benchmark(score_all, X, warmup=2, repeat=10, name="float32"),
)
print(f"float32 vs float64 on this CPU: {dtype_ratio.speedup:.2f}x")
lab.record(
    rows=rows,
    ops_per_row=ops_per_row,
    speedup=speedup.speedup,
    pairwise_speedup=pair_speedup.speedup,
    float32_vs_float64=dtype_ratio.speedup,
)

# %% [markdown]
# **Try next:** time `pairwise_fast` both ways (broadcasting and the matmul identity) at a
# larger `points`; the broadcast's intermediate grows as $n \cdot m \cdot d$. For code that
# cannot be vectorised, a compiled kernel is the next step, and only where the profile says so.
