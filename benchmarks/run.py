"""The benchmark suite: runs every part in one process and rewrites ``RESULTS.md``.

    python benchmarks/run.py [--quick] [--only NAME ...] [--out PATH]

Parts (``--only`` takes these names, repeated or comma-separated):

- ``ops``      engine per-op overhead vs NumPy and torch, large ops, import time (engine_ops.py)
- ``steps``    MLP and CNN training steps vs hand-written NumPy and torch (engine_step.py)
- ``conv``     a convolution's backward vs its forward, and both vs torch (conv_backward.py)
- ``profiler`` hook cost, cost per event, step slowdown, observer effect (profiler_overhead.py)
- ``peers``    profiler cost vs torch.profiler, viztracer, pyinstrument, cProfile, scalene
               (peers.py)
- ``growth``   summary, export, level of detail at 10^4..10^6 events (growth.py)
- ``torch``    profiling a PyTorch training step: everyo's torch adapter vs torch.profiler
               (torch_cost.py)

Each part is also a script printing its own table (``python benchmarks/engine_ops.py``): the same
code, so there is one way to measure each thing. The file is rewritten from this run: the
environment record, then one block per part between ``<!-- suite:NAME -->`` markers; a part not
run keeps its previous block (its stamp says when it was measured). Everything after
``<!-- suite:kept -->`` is measured separately (browser figures, GPU rows...) and kept as it is.
``--quick`` is a smoke run (few repeats, small sizes; the test suite runs it into a temporary
file): its figures are not measurements and say so. Peers (torch, viztracer, pyinstrument) are
optional: a missing one is skipped with a note.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import re
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

PARTS = {
    "ops": "engine_ops",
    "steps": "engine_step",
    "conv": "conv_backward",
    "profiler": "profiler_overhead",
    "peers": "peers",
    "growth": "growth",
    "torch": "torch_cost",
}
KEPT = "<!-- suite:kept -->"
HEAD = """# Benchmark results

Every figure comes from a script in this folder, as a ratio against a baseline measured in the
same run (interleaved repeats), because the machines are shared and noisy; tests never assert
times. The blocks below, up to "Measured separately", are written by `python benchmarks/run.py`
(`--only NAME` reruns one part; each block's stamp says when and from which commit). Targets are
those of the project's TARGETS.md; each row says "met" or "**missed**" with its figure.
"""


def _block(name: str, body: str) -> str:
    return f"<!-- suite:{name} -->\n{body.strip()}\n<!-- /suite:{name} -->"


def _old_blocks(text: str) -> dict[str, str]:
    pattern = re.compile(r"<!-- suite:(\w+) -->\n(.*?)\n<!-- /suite:\1 -->", re.S)
    return {m.group(1): m.group(2) for m in pattern.finditer(text)}


def _kept(text: str) -> str:
    i = text.find(KEPT)
    return text[i:] if i >= 0 else KEPT + "\n\n## Measured separately\n"


def run_parts(names: list[str], quick: bool) -> tuple[dict[str, str], list[str]]:
    """Markdown of each part run now, and the parts that failed."""
    import suite

    stamp_base = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    git = _git_commit()
    out, failed = {}, []
    for name in names:
        t0 = time.perf_counter()
        stamp = f"measured {stamp_base}, commit {git}"
        if quick:
            stamp += "; QUICK smoke run: few repeats, small sizes, the figures are not measurements"
        try:
            section = importlib.import_module(PARTS[name]).section(quick)
            out[name] = section.markdown(f"{stamp}; {time.perf_counter() - t0:.0f} s")
        except Exception:  # noqa: BLE001 - one part failing must not lose the others
            failed.append(name)
            out[name] = (
                f"### {name}\n\n_{stamp}_\n\nThis part failed:\n\n```\n"
                + (traceback.format_exc(limit=6))
                + "```"
            )
        print(f"[run.py] {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    del suite
    return out, failed


def _git_commit() -> str:
    import subprocess

    try:
        res = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                             capture_output=True, text=True, check=True)  # fmt: skip
        return res.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_results(path: Path, fresh: dict[str, str], only: list[str] | None, kept_from: Path):
    """Rewrite ``path``: environment, one block per part (fresh or kept), the kept tail."""
    from suite import environment_markdown

    old_text = path.read_text() if path.exists() else ""
    source = old_text or (kept_from.read_text() if kept_from.exists() else "")
    old = _old_blocks(source)
    parts = [HEAD, "## Environment of the last suite run", "",
             _block("environment", environment_markdown(only)), ""]  # fmt: skip
    parts.append("## Suite results\n")
    for name in PARTS:
        body = fresh.get(name) or old.get(name)
        if body is None:
            body = f"### {name}\n\n_not measured yet: `python benchmarks/run.py --only {name}`_"
        parts += [_block(name, body), ""]
    parts.append(_kept(source).rstrip() + "\n")
    path.write_text("\n".join(parts))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smoke run: few repeats, small sizes")
    ap.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help=f"run only these parts ({', '.join(PARTS)}); repeat or comma-separate",
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=HERE / "RESULTS.md",
        help="the file to rewrite (default: benchmarks/RESULTS.md)",
    )
    args = ap.parse_args(argv)
    only = [n.strip() for o in args.only or [] for n in o.split(",") if n.strip()] or None
    unknown = sorted(set(only or ()) - set(PARTS))
    if unknown:
        ap.error(f"unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    names = only or list(PARTS)
    fresh, failed = run_parts(names, args.quick)
    write_results(args.out, fresh, only, HERE / "RESULTS.md")
    print(f"[run.py] wrote {args.out}", file=sys.stderr)
    if failed:
        print(f"[run.py] failed: {', '.join(failed)} (their blocks hold the traceback)",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
