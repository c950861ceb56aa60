"""DataLoader fast path (vectorised gather from an ArrayDataset) against the generic path (one
``__getitem__`` per sample plus ``default_collate``) on the same arrays, interleaved in one run;
also the cost of prefetching on a background thread.

    python benchmarks/dataloader_fast_path.py [--rounds 7] [--samples 10000]

Prints the time per epoch and the fast path's speed-up for the guide's shapes (10,000 x 32
features, int64 targets) at several batch sizes.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import everyo as eo


class GenericDataset:
    """The same arrays behind the plain map-style protocol (no fast path)."""

    def __init__(self, features, targets):
        self.features, self.targets = features, targets

    def __len__(self):
        return len(self.features)

    def __getitem__(self, i):
        return self.features[i], self.targets[i]


def epoch_time(loader) -> float:
    start = time.perf_counter()
    for _x, _y in loader:
        pass
    return time.perf_counter() - start


def measure(features, targets, batch: int, rounds: int) -> dict:
    loaders = {
        "fast": eo.DataLoader(eo.ArrayDataset(features, targets), batch, shuffle=True, seed=0),
        "generic": eo.DataLoader(GenericDataset(features, targets), batch, shuffle=True, seed=0),
        "fast+prefetch": eo.DataLoader(
            eo.ArrayDataset(features, targets), batch, shuffle=True, seed=0, prefetch=2
        ),  # fmt: skip
    }
    assert loaders["fast"].fast_path and not loaders["generic"].fast_path
    times: dict[str, list[float]] = {k: [] for k in loaders}
    for loader in loaders.values():  # warm up
        epoch_time(loader)
    for _ in range(rounds):
        for name, loader in loaders.items():
            times[name].append(epoch_time(loader))
    row = {"batch": batch, "batches": len(loaders["fast"])}
    for name, ts in times.items():
        row[name] = 1000 * statistics.median(ts)
    row["speedup"] = statistics.median(g / f for g, f in zip(times["generic"], times["fast"]))
    return row


class SlowSource(GenericDataset):
    """Batches that take ``delay`` seconds to prepare outside the GIL (reading files, decoding):
    what ``prefetch`` is for."""

    def __init__(self, features, targets, delay):
        super().__init__(features, targets)
        self.delay = delay

    def collate(self, samples):
        time.sleep(self.delay)
        return eo.data.default_collate(samples)


def overlap(features, targets, batch: int, delay: float, rounds: int) -> dict:
    """Epoch time with a step of ``delay`` seconds per batch (outside the GIL, as BLAS is),
    without and with prefetching."""
    src = SlowSource(features[: batch * 20], targets[: batch * 20], delay)
    out = {}
    for k in (0, 2):
        loader = eo.DataLoader(src, batch, collate_fn=src.collate, prefetch=k)
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            for _batch in loader:
                time.sleep(delay)  # the training step
            times.append(time.perf_counter() - start)
        out[k] = 1000 * statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--batches", default="32,128,512")
    args = parser.parse_args()
    rng = np.random.default_rng(42)
    features = rng.normal(size=(args.samples, 32)).astype(np.float32)
    targets = rng.integers(0, 10, args.samples)
    print("| batch | batches/epoch | fast ms/epoch | generic ms/epoch | fast+prefetch ms/epoch |"
          " fast-path speed-up |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    for b in (int(v) for v in args.batches.split(",")):
        r = measure(features, targets, b, args.rounds)
        print(f"| {r['batch']} | {r['batches']} | {r['fast']:.2f} | {r['generic']:.2f} | "
              f"{r['fast+prefetch']:.2f} | {r['speedup']:.1f}× |")  # fmt: skip
    delay = 0.002
    o = overlap(features, targets, 128, delay, max(2, args.rounds // 2))
    print(f"\nslow source ({delay * 1000:.0f} ms to prepare a batch, {delay * 1000:.0f} ms step, "
          f"20 batches): prefetch=0 {o[0]:.1f} ms/epoch, prefetch=2 {o[2]:.1f} ms/epoch "
          f"({o[0] / o[2]:.2f}× faster)")  # fmt: skip


if __name__ == "__main__":
    main()
