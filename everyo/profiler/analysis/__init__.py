"""Analysis (pure): summaries, self time, call trees and diffs of a run
(:mod:`~everyo.profiler.analysis.run_analysis`), the summary table's sums (``aggregates``), its
vocabulary (``schema``), labels (``names``) and text (``summary_table``), and training-step
statistics (``step_stats``).

The functions of ``run_analysis`` are also reached here, as they always were
(``everyo.profiler.analysis.summarize``), loaded on first use.
"""

import importlib

FUNCTIONS = (
    "call_durations",
    "call_tree",
    "diff",
    "inclusive",
    "run_notes",
    "self_times",
    "step_bounds",
    "step_summary",
    "summarize",
    "top_self",
)


def __getattr__(name: str):
    # (only these names: any other falls through to the import of a submodule of that name)
    if name in FUNCTIONS:
        return getattr(importlib.import_module("everyo.profiler.analysis.run_analysis"), name)
    raise AttributeError(f"module 'everyo.profiler.analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(FUNCTIONS))
