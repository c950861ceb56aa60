"""A load builds each column in one growing mapping and gives it to the store as it is (issue 44,
case 10: a Chrome trace's load held its events twice at the peak, 1.3-1.9x its file)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from everyo.profiler.export import _columns
from everyo.profiler.export._columns import Columns, floats_to_int64
from everyo.profiler.storage.store import EventStore


def test_a_column_grows_past_its_first_mapping_with_its_values_kept():
    cols = Columns()
    blocks = [np.arange(i * 50_000, (i + 1) * 50_000, dtype=np.int64) for i in range(8)]
    for block in blocks:  # 400,000 rows: the first mapping holds 65,536
        cols.add("start_ns", block)
    out = cols.columns()["start_ns"]
    assert np.array_equal(out, np.concatenate(blocks))
    out[-1] = -5  # the column is the caller's to write (the store may fill columns later)


def test_an_optional_column_costs_nothing_until_a_block_has_it():
    cols = Columns()
    cols.add("flops", 3, present=False)
    cols.add("bytes", 2, present=False)
    cols.add("flops", np.array([7, 8], np.int64))
    cols.add("flops", 1, present=False)
    out = cols.columns()
    assert set(out) == {"flops"}  # no block had bytes
    assert out["flops"].tolist() == [-1, -1, -1, 7, 8, -1]


def test_a_block_of_a_wider_type_widens_its_column():
    cols = Columns()
    cols.add("index", np.array([1, 2], np.int32))
    cols.add("index", np.array([2**40], np.int64))
    out = cols.pop("index")
    assert out.dtype == np.int64 and out.tolist() == [1, 2, 2**40]
    assert Columns().pop("none", np.float64).dtype == np.float64


def test_a_block_without_the_column_marked_present_is_kept_only_beside_one_with_it():
    cols = Columns()
    cols.add("shape", np.array([-1, -1], np.int32), present=False)
    assert cols.columns() == {}
    cols = Columns()
    cols.add("shape", np.array([-1, -1], np.int32), present=False)
    cols.add("shape", np.array([4], np.int32))
    assert cols.columns()["shape"].tolist() == [-1, -1, 4]


def test_floats_become_int64_in_their_own_memory(monkeypatch):
    monkeypatch.setattr(_columns, "BLOCK", 7)  # several blocks
    values = np.arange(50, dtype=np.float64) * 1000.0
    out = floats_to_int64(values)
    assert out.dtype == np.int64 and np.shares_memory(out, values)
    assert out.tolist() == [i * 1000 for i in range(50)]


def _columns_of(n: int) -> dict:
    end = np.arange(1, n + 1, dtype=np.int64) * 10
    return {
        "start_ns": end - 5,
        "dur_ns": np.full(n, 5, np.int64),
        "key": np.zeros(n, np.int32),
        "thread": np.zeros(n, np.int16),
        "depth": np.zeros(n, np.int16),
    }


def test_the_store_adopts_a_readers_columns_and_copies_anyone_elses():
    cols = _columns_of(10)
    store = EventStore.from_columns(cols, [("user", "a", "")], threads=[(1, "t")], adopt=True)
    assert len(store) == 10 and store.read()["dur_ns"].tolist() == [5] * 10
    assert np.shares_memory(store._chunks[0].cols["start_ns"], cols["start_ns"])
    copied = EventStore.from_columns(_columns_of(10), [("user", "a", "")], threads=[(1, "t")])
    assert copied.read()["start_ns"].tolist() == store.read()["start_ns"].tolist()
    wide = {**_columns_of(10), "thread": np.zeros(10, np.int64)}  # not the store's type
    other = EventStore.from_columns(wide, [("user", "a", "")], threads=[(1, "t")], adopt=True)
    assert not np.shares_memory(other._chunks[0].cols["thread"], wide["thread"])
    assert other.read()["start_ns"].tolist() == store.read()["start_ns"].tolist()
    store.add_column("device_ns")  # a loaded store still takes optional columns
    assert store.read()["device_ns"].tolist() == [-1] * 10


PEAK = """
import sys
from pathlib import Path
from everyo.profiler.export import reader
def status(key):
    return next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith(key))
path = Path(sys.argv[1])
reader.read_run(Path(sys.argv[2]))  # (a small one: everything imported; then the peak reset)
try:
    open("/proc/self/clear_refs", "w").write("5")
except OSError:  # (a sandbox may not let a process reset its own peak)
    print("no-reset")
    raise SystemExit(0)
before = status("VmRSS")
run = reader.read_run(path)
print(run.num_events, status("VmHWM") - before)
"""


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux's peak reset")
def test_loading_a_chrome_trace_holds_its_events_once(tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        import load_memory
    finally:
        sys.path.pop(0)
    (tmp_path / "small").mkdir()
    small = load_memory.export(load_memory.make_run(2_000), tmp_path / "small", "chrome")
    path = load_memory.export(load_memory.make_run(300_000), tmp_path, "chrome")
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PEAK), str(path), str(small)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if out == ["no-reset"]:
        pytest.skip("this system does not let a process reset its peak memory")
    n, grew = int(out[0]), int(out[1])
    assert n == 300_000
    # the process grew by 0.97x the file (147 bytes an event) when the blocks' arrays were
    # joined, copied into the store and its times read back whole; 0.57x now (the store's
    # columns, 28 bytes an event, and the nesting's sort at the peak)
    assert grew < 0.8 * path.stat().st_size, (grew, path.stat().st_size)
