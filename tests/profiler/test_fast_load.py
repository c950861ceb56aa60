"""``load`` reads everyo's own line layout without the json module (issue 44, case 10): the run
is exactly the one the json path gives, on varied runs and whichever block an event falls in,
and a file that deviates from the layout is read by the json path, loaded or refused as before.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from everyo.errors import EveryOExportError
from everyo.profiler import load
from everyo.profiler.export import _fast, _stream
from everyo.profiler.export.chrome import export_chrome_trace
from everyo.profiler.export.events import export_json
from everyo.profiler.storage.run import Run
from everyo.profiler.storage.store import EventStore

pytestmark = pytest.mark.skipif(_fast.SCAN is None, reason="the compiled extension is not built")


def _varied_run(n: int = 400, rich: bool = False) -> Run:
    """Threads, shapes (some missing), FLOPs (some unknown), metadata, unicode and quoted names;
    ``rich``: every optional column, times of no whole microsecond (a Chrome trace then writes
    some durations as the double that lands on the end: ``9.219999999999999``), a counter and
    a process per thread."""
    store = EventStore(optional=["shape", "flops"] + ["bytes", "mem_bytes", "device_ns"] * rich)
    names = ["Linear", "Kraft ü", 'a "quoted" \\ name', "日本語", "tab\there", "x" * 70]
    keys = [
        store.intern_key(kind, name, f"0.{i}")
        for i, name in enumerate(names)
        for kind in ("module", "user")
    ]
    shapes = [store.intern_shape(s) for s in ("[(32, 64)] -> (32, 64)", "[(1,)] -> ()", "")]
    for tid, name in ((11, "MainThread"), (2**40 + 3, "worker ü")):
        store.add_thread(tid, name)
    rng = np.random.default_rng(0)
    m = n // 2
    start = np.arange(m, dtype=np.int64) * 1000
    cols = {
        "start_ns": np.empty(2 * m, np.int64),
        "dur_ns": np.empty(2 * m, np.int64),
        "depth": np.empty(2 * m, np.int16),
        "key": np.array(keys, np.int32)[rng.integers(0, len(keys), 2 * m)],
        "thread": rng.integers(0, 2, 2 * m).astype(np.int16),
        "shape": np.array(shapes + [-1], np.int32)[rng.integers(0, 4, 2 * m)],
        "flops": np.where(rng.random(2 * m) < 0.3, -1, rng.integers(0, 10**12, 2 * m)),
    }
    cols["start_ns"][0::2], cols["dur_ns"][0::2], cols["depth"][0::2] = start + 100, 500, 1
    cols["start_ns"][1::2], cols["dur_ns"][1::2], cols["depth"][1::2] = start, 900, 0
    if rich:
        start = np.sort(rng.integers(0, 10**13, m)) * 1000 + rng.integers(0, 1000, m)
        outer = rng.integers(1000, 10**9, m)
        cols["start_ns"][1::2], cols["dur_ns"][1::2] = start, outer
        cols["start_ns"][0::2] = start + outer // 3
        cols["dur_ns"][0::2] = outer // 3 + rng.integers(0, 7, m)
        for name in ("bytes", "mem_bytes", "device_ns"):
            cols[name] = np.where(rng.random(2 * m) < 0.3, -1, rng.integers(0, 10**9, 2 * m))
    metadata = {i: {"step": i, "note": 'ü " x', "input_shapes": [[1]]} for i in range(0, 2 * m, 7)}
    store.append(cols, metadata)
    run = Run(store, label="fast ü")
    if rich:
        run.add_counter("memory ü", np.arange(5) * 10**6, np.arange(5) * 4096)
        run.processes = {11: (1, "main"), 2**40 + 3: (7, "worker ü")}
    run.finish(wall_ns=int(cols["start_ns"].max() + cols["dur_ns"].max()))
    return run


def _write(run, path, fmt):
    if fmt == "chrome":
        return export_chrome_trace(run, path)
    return export_json(run, path, format=fmt)


def _state(run):
    cols = run.store.read(0)
    return (
        {name: values.tolist() for name, values in sorted(cols.items())},
        run.store.metadata,
        list(run.store.keys),
        list(run.store.shapes),
        run.store.threads,
        (run.label, run.wall_ns, run.process_id, run.status),
    )


def _json_path(monkeypatch):
    """Load with the compiled scan switched off: every block through the json module."""
    m = pytest.MonkeyPatch()
    m.setattr(_fast, "SCAN", None)
    return m


def _outcome(path):
    try:
        return _state(load(path))
    except EveryOExportError as exc:
        return ("refused", str(exc))
    except Exception as exc:  # (a bare error: the same one on both paths)
        return ("raised", type(exc).__name__, str(exc))


def _both(path, monkeypatch):
    fast = _outcome(path)
    m = _json_path(monkeypatch)
    try:
        slow = _outcome(path)
    finally:
        m.undo()
    return fast, slow


@pytest.fixture
def used(monkeypatch):
    """How many blocks each fast reader took (and did not hand to the json path)."""
    count = {"events": 0, "raw": 0, "chrome": 0}
    for fmt, name in (("events", "events_chunk"), ("raw", "raw_chunk"), ("chrome", "chrome_chunk")):
        real = getattr(_fast, name)

        def spy(part, real=real, fmt=fmt):
            got = real(part)
            count[fmt] += got is not None
            return got

        monkeypatch.setattr(_fast, name, spy)
    return count


@pytest.mark.parametrize("fmt", ["events", "raw", "chrome"])
@pytest.mark.parametrize("rich", [False, True])
@pytest.mark.parametrize("block", [None, 700])
@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_the_fast_path_gives_the_run_the_json_path_gives(
    tmp_path, monkeypatch, used, fmt, rich, block, suffix
):
    if block:
        monkeypatch.setattr(_stream, "BLOCK_BYTES", block)
    path = _write(_varied_run(rich=rich), tmp_path / f"t{suffix}", fmt)
    fast, slow = _both(path, monkeypatch)
    assert fast[0] != "refused"
    assert fast == slow
    assert used[fmt] >= (1 if block is None else 20)


def test_a_chrome_trace_of_another_tool_in_the_same_lines_takes_the_json_path(
    tmp_path, monkeypatch, used
):
    path = _write(_varied_run(rich=True), tmp_path / "t.json", "chrome")
    text = path.read_text()
    path.write_text(text[: text.index(',"everyo_run"')] + "}}\n")  # no run header: not ours
    fast, slow = _both(path, monkeypatch)
    assert fast == slow and fast[0] != "refused"
    assert used["chrome"] == 0


@pytest.mark.parametrize("fmt", ["events", "raw", "chrome"])
def test_a_sampled_run_loads_the_same(tmp_path, monkeypatch, used, fmt):
    from everyo.profiler import profile, record_function, runs

    with profile(sample=0.5) as p:
        with record_function("step ü"):
            end = __import__("time").perf_counter() + 0.03
            while __import__("time").perf_counter() < end:
                pass
    if fmt == "chrome":
        path = p.export_chrome_trace(tmp_path / "s.json")
    else:
        path = p.export_json(tmp_path / "s.json", format=fmt)
    runs.clear()
    fast, slow = _both(path, monkeypatch)
    assert fast == slow and fast[0] != "refused"
    assert used[fmt] == 1


# Lines edited in place, the file otherwise as everyo wrote it: each is either read by the json
# path (the fast one refuses the block) or by the fast one, and the outcome is the json path's.
EDITS = [  # (pattern, replacement) for re.sub on one line, first match
    (r'"start_ns":', '"start_ns": '),  # whitespace the layout has not
    (r'"start_ns":', '"start_ns":-'),  # a negative start (allowed)
    (r'"start_ns":\d+', '"start_ns":4611686018427387905'),  # 2**62 + 1
    (r'"depth":\d+', '"depth":40000'),  # past int16
    (r'"depth":\d+', '"depth":-1'),
    (r'"depth":(\d+)', r'"depth":\1.0'),  # a float where everyo writes ints
    (r'"depth":\d+', '"depth":null'),
    (r'"depth":(\d+)', r'"depth":"\1"'),
    (r'"depth":(\d+)', r'"depth":0\1'),  # a leading zero: no JSON
    (r'"(dur_ns|duration_ns)":\d+', r'"\1":-5'),
    (r'"(dur_ns|duration_ns)":\d+', r'"\1":99999999999999999999'),  # past int64
    (r'"(dur_ns|duration_ns)":\d+', r'"\1":999999999999999999'),  # the sum past 2**62
    (r'"(dur_ns|duration_ns)":\d+', r'"\1":0x10'),
    (r'"(dur_ns|duration_ns)":\d+,', ""),  # a required field missing
    (r'"depth":\d+,', ""),
    (r'"(dur_ns|duration_ns)"', r'"\1":1,"\1"'),  # a repeated key
    (r'"(dur_ns|duration_ns)"', r'"zzz":1,"\1"'),  # an unknown key
    (r'"name":"', '"name":"\\\\ud800'),  # a lone surrogate escape (JSON allows it)
    (r'"name":"', '"name":"\\\\q'),  # a bad escape
    (r'"name":"[^"]*"', '"name":1'),
    (r'"name":"[^"]*"', '"name":["a"]'),
    (r'"kind":"[^"]*"', '"kind":7'),
    (r'"path":"[^"]*"', '"path":{}'),
    (r'"shapes":"[^"]*"', '"shapes":null'),
    (r'"shapes":"[^"]*"', '"shapes":5'),
    (r'"shapes":"', '"shapes":"\udcff'),  # a byte that is no UTF-8 (written back as 0xff)
    (r'"metadata":(\{[^\n]*?\})(,"kind"|\}$)', r'"metadata":[\1]\2'),
    (r'"metadata":(\{[^\n]*?\})(,"kind"|\}$)', r'"metadata":null\2'),
    (r'"metadata":\{', '"metadata":{"a":[1,{"b":"}"}],'),
    (r'"metadata":\{', '"metadata":[{'),
    (r"\},$", "}"),  # a missing comma between lines
    (r"\},$", "},,"),
    (r"\},$", "}\r,"),
    (r"\},$", "},\n"),  # an empty line
    (r'^\{"', '{ "'),
    (r'"flops":-?\d+', '"flops":-2'),
    (r'"flops":-?\d+', '"flops":null'),
    (r'"(tid|thread_id)":\d+', r'"\1":"main"'),
    (r'"(tid|thread_id)":\d+', r'"\1":-7'),
]


@pytest.mark.parametrize("fmt", ["events", "raw"])
@pytest.mark.parametrize("old, new", EDITS, ids=range(len(EDITS)))
@pytest.mark.parametrize("line", [1, 150, -2])
def test_a_line_off_the_layout_loads_or_is_refused_as_the_json_path_does(
    tmp_path, monkeypatch, fmt, old, new, line
):
    monkeypatch.setattr(_stream, "BLOCK_BYTES", 2000)
    path = _write(_varied_run(300), tmp_path / "t.json", fmt)
    lines = path.read_bytes().decode("utf-8", "surrogateescape").split("\n")
    start = next(
        i for i, t in enumerate(lines) if t.startswith('{"name"') or t.startswith('{"row"')
    )
    target = start + line if line >= 0 else len(lines) + line - 1
    edited = re.sub(old, new, lines[target], count=1)
    if edited == lines[target]:
        pytest.skip("this format's line has no such text")
    lines[target] = edited
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_the_last_line_may_end_with_a_comma_as_the_json_path_allows(tmp_path, monkeypatch):
    path = _write(_varied_run(50), tmp_path / "t.json", "events")
    text = path.read_text()
    path.write_text(text.replace("}\n]", "},\n]"))
    fast, slow = _both(path, monkeypatch)
    assert fast == slow and fast[0] != "refused"


def test_scan_lines_refuses_what_is_not_one_flat_object_a_line():
    scan = _fast.SCAN
    keys, ints = (b"a", b"b"), bytes([1, 0])
    assert scan(b'{"a":1,"b":"x"},\n{"a":-2,"b":[1,{"c":"]"}]}\n', keys, ints, True) is not None
    for bad in (
        b'{"a":1,"b":"x"}\n{"a":2,"b":"y"}\n',  # no comma
        b'{"a":01,"b":"x"}\n',
        b'{"a":1,"b":"x\ny"}\n',
        b'{"a":1,"a":2}\n',
        b'{"a":1,"c":2}\n',
        b'{"a":1234567890123456789}\n',  # 19 digits: past what is read as int64 here
        b'{"a":1}junk\n',
        b'{"a":1,"b":{"c":1}\n',
        b"[1]\n",
    ):
        assert scan(bad, keys, ints, True) is None, bad
    got, starts, fits = scan(b'{"a":5},\n{"b":"q"}\n', keys, ints, True)
    (a, a_present), (b, b_present) = got
    assert np.frombuffer(starts, np.int64).tolist() == [0, 9, 19] and fits == b"\x01\x01"
    assert np.frombuffer(a, np.int64).tolist() == [5, 0] and list(a_present) == [1, 0]
    assert b == [None, b'"q"'] and list(b_present) == [0, 1]


# Lines of an everyo Chrome trace edited in place, as EDITS above: numbers the json module reads
# its own way, phases the fast path leaves to it, fields missing or doubled, broken lines.
CHROME_EDITS = [
    (r'"ts": *', '"ts":-'),
    (r'"ts": *[\d.]+', '"ts":1e999'),
    (r'"ts": *[\d.]+', '"ts":null'),
    (r'"ts": *[\d.]+', '"ts":"5"'),
    (r'"ts": *[\d.]+', '"ts":true'),
    (r'"ts": *([\d.]+)', r'"ts":\1e0'),
    (r'"ts": *([\d.]+)', r'"ts":\1E+2'),
    (r'"ts": *[\d.]+', '"ts":12345678901234567890'),  # an int the json module keeps exact
    (r'"ts": *[\d.]+', '"ts":123456789012345'),
    (r'"ts": *[\d.]+', '"ts":1234567.8901234567'),
    (r'"ts": *[\d.]+', '"ts":4611686018427387.905'),  # past 2**62 ns
    (r'"ts": *[\d.]+', '"ts":01.5'),
    (r'"ts": *[\d.]+', '"ts":1.'),
    (r'"ts": *[\d.]+', '"ts":-0'),
    (r'"ts": *[\d.]+,', ""),
    (r'"dur": *[\d.]+', '"dur":-0.5'),
    (r'"dur": *[\d.]+', '"dur":-0.0'),
    (r'"dur": *[\d.]+', '"dur":1e-400'),
    (r'"dur": *[\d.]+,', ""),  # 0, as the json path reads it
    (r'"dur"', '"dur":1,"dur"'),
    (r'"ph": ?"[XMC]"', '"ph":"X"'),
    (r'"ph": ?"[XMC]"', '"ph":"B"'),
    (r'"ph": ?"[XMC]"', '"ph":"E"'),
    (r'"ph": ?"[XMC]"', '"ph":"i"'),
    (r'"ph": ?"[XMC]"', '"ph":"Q"'),
    (r'"ph": ?"[XMC]"', '"ph":"\\\\u0058"'),
    (r'"ph": ?"[XMC]", ?', ""),
    (r'"cat":"[^"]*"', '"cat":7'),
    (r'"cat":"[^"]*",', ""),
    (r'"name": ?"[^"]*"', '"name":null'),
    (r'"name": ?"', '"name":"\\\\ud800'),
    (r'"name": ?"', '"name":"\\\\q'),
    (r'"pid": ?\d+', '"pid":"p"'),
    (r'"pid": ?\d+', '"pid":7'),
    (r'"tid": ?\d+', '"tid":-3'),
    (r'"tid": ?\d+', '"tid":2.5'),
    (r'"tid": ?\d+, ?', ""),
    (r'"args": ?\{', '"args":{"zzz":1,'),
    (r'"args": ?\{', '"args": {'),
    (r'"args": ?\{', '"args":{ '),
    (r'"args": ?\{', '"args":{"args":1,'),
    (r'"args": ?\{.*\}\}', '"args":[]}'),
    (r'"args": ?\{.*\}\}', '"args":{}}'),
    (r'"flops": *(null|\d+)', '"flops":-3'),
    (r'"flops": *(null|\d+)', '"flops":1.5'),
    (r'"flops": *(null|\d+)', '"flops":true'),
    (r'"flops": *(null|\d+)', '"flops":nul'),
    (r'"flops": *(null|\d+)', '"flops":99999999999999999999'),
    (r'"device_us": *(null|[\d.]+)', '"device_us":1e400'),
    (r'"device_us": *(null|[\d.]+)', '"device_us":9223372036854775.807'),
    (r'"device_us": *(null|[\d.]+)', '"device_us":0.0005'),  # rounds half to even
    (r'"device_us": *(null|[\d.]+)', '"device_us":0.0015'),
    (r'"device_us": *(null|[\d.]+)', '"device_us":"x"'),
    (r'"bytes": *(null|\d+)', '"bytes":null'),
    (r'"path":"[^"]*"', '"path":null'),
    (r'"path":"[^"]*"', '"path":{}'),
    (r'"shapes":"[^"]*"', '"shapes":null'),
    (r'"shapes":"[^"]*"', '"shapes":5'),
    (r'"shapes":"', '"shapes":"\udcff'),  # a byte that is no UTF-8 (written back as 0xff)
    (r'"metadata":(\{.*\})\}\}$', r'"metadata":[\1]}}'),
    (r'"metadata":(\{.*\})\}\}$', r'"metadata":{}}}'),
    (r'"metadata":(\{.*\})\}\}$', r'"metadata":null}}'),
    (r'"metadata":\{', '"metadata":[{'),
    (r'"args":\{', '"args":{"metadata":{"a":[1,{"b":"}"}]},'),
    (r",$", ",,"),
    (r",$", "\r,"),
    (r",$", ",\n"),  # an empty line
    (r" *,$", ""),  # a missing comma
    (r"^\{", " {"),
    (r"^\{", '{"ph":"X",'),
    (r"\} *,$", '},{"ph":"M"},'),  # two events on a line
    (r"^.*,$", "7,"),
    (r"^.*,$", '"x",'),
    (r"$", "\t"),
]


@pytest.mark.parametrize("old, new", CHROME_EDITS, ids=range(len(CHROME_EDITS)))
@pytest.mark.parametrize("which", ["names", "first", "middle", "metadata", "counter", "last"])
def test_a_chrome_line_off_the_layout_loads_or_is_refused_as_the_json_path_does(
    tmp_path, monkeypatch, old, new, which
):
    monkeypatch.setattr(_stream, "BLOCK_BYTES", 2000)
    path = _write(_varied_run(300, rich=True), tmp_path / "t.json", "chrome")
    lines = path.read_bytes().decode("utf-8", "surrogateescape").split("\n")
    xs = [i for i, t in enumerate(lines) if t.startswith('{"ph":"X"')]
    target = {
        "names": 1,
        "first": xs[0],
        "middle": xs[len(xs) // 2],
        "metadata": next(i for i in xs if '"metadata"' in lines[i]),
        "counter": next(i for i, t in enumerate(lines) if t.startswith('{"ph":"C"')),
        "last": next(i for i, t in enumerate(lines) if t.startswith("]")) - 1,
    }[which]
    edited = re.sub(old, new, lines[target], count=1)
    if edited == lines[target]:
        pytest.skip("this line has no such text")
    lines[target] = edited
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape"))
    fast, slow = _both(path, monkeypatch)
    assert fast == slow


def test_scan_lines_reads_numbers_as_the_json_module_does():
    texts = ["0", "-0", "7", "-12", "123456789012345", "0.5", "-0.0", "1.000", "29761369010.464",
             "429054.3430175781", "9.219999999999999", "1e3", "-2.5E-3", "1E+2", "1e999",
             "-1e999", "1e-400", "0.1", "123.456", "4611686018427387.904", "5e-324"]  # fmt: skip
    rng = np.random.default_rng(1)
    texts += [repr(float(x)) for x in rng.random(200) * 10.0 ** rng.integers(-8, 16, 200)]
    texts += [f"{x // 1000}.{x % 1000:03d}" for x in rng.integers(0, 10**15, 200).tolist()]
    block = "".join(f'{{"a":{t}}},\n' for t in texts).encode()
    (values, present), = _fast.SCAN(block, (b"a",), bytes([_fast.FLOAT]), True)[0]  # fmt: skip
    got = np.frombuffer(values, np.float64)
    want = np.array([float(json.loads(t)) for t in texts])
    assert got.tobytes() == want.tobytes()  # bit for bit, the sign of zero included
    for bad in ("12345678901234567890", "01", "1.", ".5", "1e", "+1", "nan", "0x10", "1.5.2"):
        assert _fast.SCAN(b'{"a":%s}\n' % bad.encode(), (b"a",), b"\x02", True) is None, bad


def test_scan_lines_reads_nulls_members_and_leaves_other_lines_to_the_caller():
    keys = (b"a", b"o", b"o.x", b"o.s")
    kinds = bytes([_fast.INT | _fast.NULL, _fast.OBJECT, _fast.FLOAT | _fast.NULL, _fast.RAW])
    block = b'{"a":null,"o":{"x":1.5,"s":"q"}},\n{"o":{}},\n{"x":1},\n{"a":  3,"o":{"x":null}}\n'
    assert _fast.SCAN(block, keys, kinds, True) is None  # {"x":1}: a member at the top level
    cols, starts, fits = _fast.SCAN(block, keys, kinds, True, True)
    assert list(fits) == [1, 1, 0, 1]
    assert np.frombuffer(starts, np.int64).tolist() == [0, 34, 44, 53, len(block)]
    (a, a_present), (_, o_present), (x, x_present), (s, s_present) = cols
    assert list(a_present) == [2, 0, 0, 1] and np.frombuffer(a, np.int64)[3] == 3
    assert list(o_present) == [1, 1, 0, 1]
    assert list(x_present) == [1, 0, 0, 2] and np.frombuffer(x, np.float64)[0] == 1.5
    assert s == [b'"q"', None, None, None]
    with pytest.raises(ValueError):
        _fast.SCAN(block, (b"o.x",), bytes([_fast.INT]), True)  # a member of no object key


def test_compiled_nesting_is_its_python_loop(monkeypatch):
    from everyo.profiler.export import _reading

    rng = np.random.default_rng(2)
    tid = rng.integers(0, 3, 3000)
    start = rng.integers(0, 400, 3000)
    end = start + rng.integers(0, 60, 3000)  # ties of start, end and both, on each thread
    compiled = _reading.nesting(tid, start, end)
    monkeypatch.setattr(_reading, "LOOPS", None)
    python = _reading.nesting(tid, start, end)
    for a, b in zip(compiled, python):
        assert a.dtype == b.dtype and a.tolist() == b.tolist()


def test_rows_already_in_post_order_are_not_sorted_and_others_are():
    from everyo.profiler.storage.store import _post_ordered

    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(0, 12))
        start = rng.integers(0, 4, n)
        end = start + rng.integers(0, 3, n)
        depth = rng.integers(0, 3, n).astype(np.int16)
        order = np.lexsort((start, -depth.astype(np.int64), end))
        assert _post_ordered(start, end, depth) == (order == np.arange(n)).all()
        s, e, d = start[order], end[order], depth[order]
        assert _post_ordered(s, e, d)


def test_without_the_extension_a_chrome_trace_loads_the_same(tmp_path):
    path = _write(_varied_run(rich=True), tmp_path / "t.json", "chrome")
    code = (
        "import sys; sys.path.insert(0, sys.argv[2]); import test_fast_load as t; "
        "from everyo.profiler import load; print(repr(t._state(load(sys.argv[1]))))"
    )
    here = str(Path(__file__).parent)
    env = {**os.environ, "EVERYO_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(path), here], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(_state(load(path)))
