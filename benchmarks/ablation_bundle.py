"""Build a copy of the dashboard's front end with one part of its live work left out, to measure
what that part costs side by side (``observer_variants.py``, ``page_trace.py --bundle``).

    python benchmarks/ablation_bundle.py no-live-drawing /tmp/nodraw.js

Ablations:

- ``no-live-drawing``: while the run records, each live refresh's events and report reach the
  widget and are stored as usual (the kernel, the server and the page's message handling do
  all their work), but nothing is drawn: no chart, header, steps or table change until the
  run ends; the final view is drawn as usual. The gap between this build and the real one is
  what drawing the live refreshes costs; the gap between this build and ``--no-live`` is what
  producing, sending and receiving them costs.

The result is for measurements only, never a product build. Both builds live side by side in
one page (each is kept by the hash of its sources), for example::

    python benchmarks/observer_variants.py --workload cnn --repeats 10 \\
      "from everyo_lab.widgets.dashboard import Dashboard as _D, STATIC as _S; \\
_D._esm = (_S / 'dashboard.js').read_text()|--label live" \\
      "from everyo_lab.widgets.dashboard import Dashboard as _D; \\
_D._esm = open('/tmp/nodraw.js').read()|--label nodraw"
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDGET = "src/dashboard_widget.js"

# ablation -> [(text in WIDGET, its replacement)]; each text must occur exactly once
ABLATIONS = {
    "no-live-drawing": [
        (
            "  const onReport = () => {\n",
            "  const onReport = () => {\n"
            '    if (running(model.get("report"))) { waiter.report(); return; }'
            " // ablation: no live drawing\n",
        ),
        (
            '...table.traits.filter((t) => t !== "report").map((t) => [t, inFrame(table.update)]),',
            '...table.traits.filter((t) => t !== "report").map((t) => [t, inFrame(() => {'
            ' if (!running(model.get("report"))) table.update(); })]),',
        ),
        (
            "const waiter = reportWaiter(() => flame.schedule(), REPORT_WAIT_MS);",
            "const waiter = reportWaiter(() => {"
            ' if (!running(model.get("report"))) flame.schedule(); }, REPORT_WAIT_MS);',
        ),
    ],
}


def patch(source: str, edits: list[tuple[str, str]], name: str = WIDGET) -> str:
    """``source`` with each edit made; an edit whose text is not there exactly once is an error
    (the front end changed: the ablation must be brought up to date, not silently skipped)."""
    for old, new in edits:
        count = source.count(old)
        if count != 1:
            raise ValueError(
                f"{name}: the ablation expects {old.strip()[:60]!r} once, found it {count} times;"
                " update benchmarks/ablation_bundle.py for the current front end"
            )
        source = source.replace(old, new)
    return source


def build(ablation: str, dest: Path, node: str | None = None) -> Path:
    """Build the dashboard bundle with ``ablation`` into ``dest`` (the checkout is untouched)."""
    node = node or shutil.which("node")
    if node is None:
        raise RuntimeError("node is not installed; the front end is built with node")
    with tempfile.TemporaryDirectory(prefix="everyo-ablation-") as tmp:
        js = Path(tmp) / "js"
        shutil.copytree(ROOT / "js", js, ignore=shutil.ignore_patterns("node_modules", "test"))
        if (ROOT / "js" / "node_modules").is_dir():  # esbuild, where `npm ci` installed it
            (js / "node_modules").symlink_to(ROOT / "js" / "node_modules")
        (Path(tmp) / "everyo_lab" / "static").mkdir(parents=True)
        widget = js / WIDGET
        widget.write_text(patch(widget.read_text(), ABLATIONS[ablation]))
        done = subprocess.run(
            [node, "build.mjs"], cwd=js, capture_output=True, text=True, timeout=120, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"the build failed:\n{done.stdout}{done.stderr}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(tmp) / "everyo_lab" / "static" / "dashboard.js", dest)
    return dest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ablation", choices=sorted(ABLATIONS))
    parser.add_argument("dest", type=Path, help="where to write the bundle (e.g. /tmp/nodraw.js)")
    args = parser.parse_args()
    try:
        path = build(args.ablation, args.dest)
    except (OSError, RuntimeError, ValueError) as exc:
        print(f"cannot build: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
