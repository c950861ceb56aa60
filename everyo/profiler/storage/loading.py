"""``load(path)``: read a raw-JSON or Chrome-trace export back into a :class:`Run`."""

from __future__ import annotations


def load(path, *, register: bool = False):
    """Read a file written by ``export_json`` or ``export_chrome_trace`` (``.gz`` too).

    Parameters
    ----------
    path : str or Path
    register : bool
        Also add the run to ``everyo.profiler.runs`` (so the dashboard lists it).

    Returns
    -------
    Run
        With the status, label, options and environment stored in the file.
    """
    from everyo.profiler.export.reader import read_run

    run = read_run(path)
    if register:
        from everyo.profiler.storage.run import runs

        runs.add(run)
    return run
