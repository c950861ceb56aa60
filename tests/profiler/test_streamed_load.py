"""``load`` reads everyo's own exports a block of events at a time (issue 36): the run is the
same as the one exported, whichever block the events fall in, and the events are never all
held as Python dicts at once."""

from __future__ import annotations

import json
import tracemalloc

import numpy as np
import pytest

from everyo.errors import EveryOExportError
from everyo.profiler import Profiler, load, record_function
from everyo.profiler.export import _stream


def _recorded(n: int = 300):
    with Profiler(label="streamed") as p:
        for i in range(n):
            with record_function("outer", step=i) if i % 50 == 0 else record_function("outer"):
                with record_function("inner"):
                    pass
    return p


EXPORTS = {
    "events": lambda p, path: p.export_json(path),
    "raw": lambda p, path: p.export_json(path, format="raw"),
    "chrome": lambda p, path: p.export_chrome_trace(path),
}


def _same(a, b):
    x, y = a.snapshot(), b.snapshot()
    assert x.name.tolist() == y.name.tolist()
    for column in ("start_ns", "dur_ns", "depth", "parent"):
        assert np.array_equal(getattr(x, column), getattr(y, column)), column
    assert [x.metadata_of(i) for i in range(len(x))] == [y.metadata_of(i) for i in range(len(y))]


@pytest.mark.parametrize("fmt", list(EXPORTS))
@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_a_load_in_small_blocks_gives_the_run_exported(tmp_path, monkeypatch, fmt, suffix):
    p = _recorded()
    path = EXPORTS[fmt](p, tmp_path / f"t{suffix}")
    whole = load(path)
    monkeypatch.setattr(_stream, "BLOCK_BYTES", 500)  # a few events per block
    blocks = list(_stream.Layout(path).chunks())
    assert len(blocks) > 20
    _same(load(path), whole)
    _same(whole, p.run)


def test_a_file_laid_out_otherwise_is_read_whole(tmp_path):
    p = _recorded(20)
    path = p.export_json(tmp_path / "t.json")
    events = json.loads(path.read_text())
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(events, indent=2))  # one event over many lines
    _same(load(pretty), load(path))


def test_loading_an_export_does_not_hold_every_event_as_a_dict(tmp_path, monkeypatch):
    p = _recorded(10_000)
    path = p.export_json(tmp_path / "t.json", format="raw")
    monkeypatch.setattr(_stream, "BLOCK_BYTES", 256 << 10)
    tracemalloc.start()
    try:
        run = load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert run.num_events == 20_000
    # the whole document as dicts took about five times the file (its columns and one block
    # of dicts: 1.7 times here, less for bigger files)
    assert peak < 2.5 * path.stat().st_size


@pytest.mark.parametrize("enabled", [True, False])
def test_the_cyclic_collector_is_as_it_was_after_a_load(tmp_path, enabled):
    import gc

    good = _recorded(5).export_json(tmp_path / "good.json")
    bad = tmp_path / "bad.json"
    bad.write_text('[{"name": 1}]')
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        load(good)
        assert gc.isenabled() is enabled
        with pytest.raises(EveryOExportError):
            load(bad)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
