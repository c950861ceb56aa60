"""``RunPicker``: a select over every run in ``everyo.profiler.runs`` (js/src/picker_widget.js)."""

from __future__ import annotations

import anywidget
import traitlets

from everyo_lab.widgets.table import STATIC


def run_entry(run) -> dict:
    """The JSON-ready description of one run the picker shows."""
    return {
        "id": run.id,
        "label": run.label,
        "status": run.status,
        "start_time": float(run.start_time),
        "wall_ms": run.wall_ns / 1e6,
        "events": int(run.num_events),
    }


class RunPicker(anywidget.AnyWidget):
    """Lists runs; ``selected`` holds the chosen run's id ("" when there is none)."""

    _esm = STATIC / "picker.js"
    runs = traitlets.List(traitlets.Dict()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    theme = traitlets.Unicode("light").tag(sync=True)

    def set_runs(self, runs) -> None:
        """Show ``runs`` (oldest first); keep the selection when it is still listed."""
        entries = [run_entry(r) for r in runs]
        self.runs = entries
        ids = {e["id"] for e in entries}
        if self.selected not in ids:
            self.selected = entries[-1]["id"] if entries else ""

    def __repr__(self) -> str:
        return f"RunPicker(runs={len(self.runs)}, selected={self.selected!r})"
