"""``everyo_lab.compare``, the dashboard's comparison (inputs, messages, picker, static twin,
``to_html``) and ``%%everyo_profile --compare`` through a real IPython ``InteractiveShell``."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("anywidget")
pytest.importorskip("IPython")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import everyo_lab  # noqa: E402
from everyo.errors import EveryOExportError, EveryOProfilerError  # noqa: E402
from everyo.profiler import Profiler, record_function, runs  # noqa: E402
from everyo_lab import Dashboard  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"


class Recording(Dashboard):
    """A dashboard that keeps what it would send to the browser."""

    def send(self, content, buffers=None):
        self.__dict__.setdefault("sent", []).append((content, buffers or []))

    def messages(self, kind, run=None):
        return [
            c
            for c, _ in self.__dict__.get("sent", [])
            if c.get("type") == kind and (run is None or c.get("run") == run)
        ]


@pytest.fixture(autouse=True)
def _fresh_runs():
    runs.clear()
    yield
    runs.clear()


def profiled(label, n=20, work=100):
    with Profiler(label=label) as p:
        for _ in range(n):
            with record_function("step"):
                with record_function("inner"):
                    sum(range(work))
    return p.run


def test_compare_takes_runs_labels_profilers_and_exported_files(tmp_path):
    import gzip

    with Profiler(label="before") as pa:
        with record_function("step"):
            pass
    a, b = pa.run, profiled("after")
    raw, trace = tmp_path / "before.json", tmp_path / "after.trace.json"
    pa.export_json(raw)  # whichever format export_json writes by default: load reads both
    with Profiler(label="after2") as pb:
        with record_function("step"):
            pass
    pb.export_chrome_trace(trace)
    packed = tmp_path / "after.trace.json.gz"
    packed.write_bytes(gzip.compress(trace.read_bytes()))
    for left, right in [(a, b), ("before", "after"), (pa, "after"), (raw, packed), (str(raw), b)]:
        board = everyo_lab.compare(left, right)
        c = board.comparison
        # a file in the plain event-array format carries no label: load names it after the file
        assert c["a"]["label"].startswith("before"), (left, right)
        assert c["b"]["label"].startswith("after"), (left, right)
        assert "step" in {r["name"] for r in c["rows"]}
        assert board.compare_only and board.compare_id == board.comparison_view.run_a.id
        json.dumps(c)  # plain JSON for the comm


def test_compare_says_what_to_do_with_a_wrong_input(tmp_path):
    profiled("before")
    with pytest.raises(EveryOProfilerError, match="neither a run.*labels held: 'before'"):
        everyo_lab.compare("befor", "before")
    with pytest.raises(EveryOProfilerError, match="expected a Run"):
        everyo_lab.compare(42, "before")
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}')
    with pytest.raises(EveryOExportError):
        everyo_lab.compare(junk, "before")


def test_the_baseline_events_go_as_binary_messages_tagged_with_its_run():
    a, b = profiled("before"), profiled("after", n=10)
    board = Recording(b, compare=a)
    (mine,) = board.messages("events", run=b.id)
    (theirs,) = board.messages("events", run=a.id)
    assert mine["n"] == 20 and theirs["n"] == 40 and theirs["complete"]
    assert board.compare_id == a.id
    # a view that holds nothing of A asks for it again; a detail request names its run
    board._on_message(board, {"type": "resend", "run": a.id}, [])
    assert len(board.messages("events", run=a.id)) == 2
    assert len(board.messages("events", run=b.id)) == 1
    state = {k: v for k, v in board.get_state().items() if k != "_esm"}
    assert len(json.dumps(state, default=str)) < 30_000  # numbers only: events are not state


def test_picking_a_run_to_compare_in_the_dashboard_picker():
    a, b = profiled("before"), profiled("after")
    board = Recording(None, picker=True)
    assert board.run is b and board.comparison == {}
    board.compare_id = a.id  # what the browser's "compare with" select sets
    assert board.compare_run is a
    assert board.comparison["a"]["label"] == "before"
    assert board.comparison["b"]["label"] == "after"
    assert board.messages("events", run=a.id)
    # the static rendering (saved in the notebook) shows the comparison too
    html = board.static_bundle()["text/html"]
    assert (
        "everyo comparison" in html and html.count('class="everyo-static-flame"') == 3
    )  # B's, then A's and B's
    board.compare_id = ""
    assert board.compare_run is None and board.comparison == {}
    board.compare_id = "no-such-run"  # evicted meanwhile: the pick is undone
    assert board.compare_id == ""


def test_grouping_the_table_regroups_the_diff():
    a, b = profiled("before"), profiled("after")
    board = Recording(b, compare=a)
    assert board.comparison["group_by"] == "name"
    board.group_by = "path"
    assert board.comparison["group_by"] == "path"


def test_to_html_writes_a_comparison_page(tmp_path):
    a, b = profiled("before", work=2000), profiled("after")
    board = everyo_lab.compare(a, b)
    path = everyo_lab.to_html(board, tmp_path / "compare.html")
    page = path.read_text()
    assert '<div id="flame_a"' in page and '<div id="flame_b"' in page
    assert "everyo-diff" in page and "plotly_relayout" in page  # the two charts zoom together
    figures = json.loads(page.split('id="everyo-figures">')[1].split("</script>")[0])
    span = max(board.comparison["a"]["wall_ms"], board.comparison["b"]["wall_ms"])
    for fig in figures.values():
        assert fig["layout"]["xaxis"]["range"] == pytest.approx([0.0, span])
    # the Comparison itself works as well
    everyo_lab.to_html(board.comparison_view, tmp_path / "view.html")
    assert (tmp_path / "view.html").stat().st_size > 1_000_000  # plotly.js inlined: offline


# -- the magic ---------------------------------------------------------------------------------
WORK = """
from everyo.profiler import record_function
for _ in range(30):
    with record_function("step"):
        total = sum(range({n}))
"""


@pytest.fixture(scope="module")
def shell():
    sh = InteractiveShell.instance()
    sh.extension_manager.load_extension("everyo_lab")
    return sh


def run_magic(shell, line, body):
    with capture_output() as cap:
        result = shell.run_cell(f"%%everyo_profile {line}\n{body}")
    return result, cap


def test_magic_compare_shows_the_comparison_under_the_dashboard(shell):
    result, _ = run_magic(shell, "--no-live --label before", WORK.format(n=3000))
    assert result.success
    result, cap = run_magic(shell, "--no-live --label after --compare before", WORK.format(n=30))
    assert result.success, cap.stdout
    statics = [o.data for o in cap.outputs if "text/html" in o.data and WIDGET not in o.data]
    final = statics[-1]["text/html"]
    assert "everyo profile · after" in final  # the dashboard's static part first
    assert final.index("everyo profile · after") < final.index("everyo comparison")
    assert "A before" in final and "B after" in final and "faster" in final
    assert "everyo comparison · before" in statics[-1]["text/plain"]
    widgets = [o.data for o in cap.outputs if WIDGET in o.data]
    assert widgets  # and the live widget, which shows the same comparison


def test_magic_compare_with_an_unknown_label_is_a_usage_message_and_runs_nothing(shell):
    shell.user_ns.pop("ran", None)
    result, cap = run_magic(shell, "--compare nope", "ran = True")
    assert result.success  # no traceback
    assert "%%everyo_profile: --compare='nope' is neither a run" in cap.stdout
    assert "ran" not in shell.user_ns and len(runs) == 0
    result, cap = run_magic(shell, "--compare", "ran = True")
    assert "expected one argument" in cap.stdout and "ran" not in shell.user_ns


def test_a_large_baseline_goes_as_bars_and_answers_detail_requests(monkeypatch):
    import functools

    import everyo_lab.widgets.compare_link as link
    from everyo_lab.widgets.stream import EventStream

    monkeypatch.setattr(link, "EventStream", functools.partial(EventStream, raw_limit=10))
    a, b = profiled("before"), profiled("after", n=3)
    board = Recording(b, compare=a)
    (bars,) = board.messages("bars", run=a.id)  # 40 events > raw_limit: merged bars
    assert bars["window"] is None
    board._on_message(board, {"type": "detail", "run": a.id, "x0": 0.0, "x1": 0.5}, [])
    (whole, zoomed) = board.messages("bars", run=a.id)
    assert zoomed["window"] == [0.0, 0.5]
    board._on_message(board, {"type": "detail", "run": a.id, "x0": "?"}, [])  # ignored
    assert len(board.messages("bars", run=a.id)) == 2
