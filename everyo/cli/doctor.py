"""``python -m everyo doctor``: check the installation, one line per check, with a fix for each.

Each check is a small function returning a :class:`CheckResult`; :data:`CHECKS` lists them in
the order they print. Only a ``fail`` (a required piece is broken) makes the exit code 1;
optional pieces (CuPy, a GPU, the lab extras, Chromium) give ``warn`` and exit code 0.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from everyo.environment_record import blas_info

# Looked up at call time so tests can make an import fail without touching sys.modules.
import_module = importlib.import_module

MIN_PYTHON = (3, 10)
CUDA_FIX = (
    'pip install "everyo[cuda12]" (CUDA 12 driver) or "everyo[cuda13]" (CUDA 13 driver); '
    "everyo runs on the CPU without it"
)
LAB_FIX = 'pip install "everyo[lab]"'
# Debian's package; the browser tests drive it (see BROWSER_TESTING.md).
CHROMIUM = Path("/usr/bin/chromium")


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    ``status`` is ``"ok"``, ``"info"`` (worth knowing, not a problem), ``"warn"`` (an optional
    piece is missing) or ``"fail"`` (a required piece is broken). Every non-ok result has a fix.
    """

    name: str
    status: str
    detail: str
    fix: str | None = None


Check = Callable[[], CheckResult]


def _import(name: str) -> tuple[ModuleType | None, str | None]:
    """(module, None) or (None, "ExceptionType: message"); any exception means not importable."""
    try:
        return import_module(name), None
    except Exception as exc:  # a broken install raises more than ImportError (OSError, ...)
        return None, f"{type(exc).__name__}: {exc}"


def _version(module: ModuleType) -> str:
    return str(getattr(module, "__version__", "unknown version"))


def python_version() -> tuple[int, int, int]:
    return tuple(sys.version_info[:3])


def check_python() -> CheckResult:
    version = python_version()
    text = ".".join(map(str, version))
    if version[:2] >= MIN_PYTHON:
        return CheckResult("Python", "ok", text)
    return CheckResult(
        "Python",
        "fail",
        f"{text} is older than 3.10",
        "install Python 3.10 or newer and reinstall everyo with it",
    )


def check_numpy() -> CheckResult:
    numpy, error = _import("numpy")
    if numpy is None:
        return CheckResult("NumPy", "fail", f"cannot import: {error}", 'pip install "numpy>=1.24"')
    return CheckResult("NumPy", "ok", _version(numpy))


def check_blas() -> CheckResult:
    blas = blas_info()
    if blas is None:
        return CheckResult(
            "BLAS",
            "warn",
            "could not tell which BLAS library NumPy uses",
            "pip install threadpoolctl; a NumPy wheel from PyPI ships OpenBLAS",
        )
    threads = "unknown" if blas["threads"] is None else blas["threads"]
    name = " ".join(str(x) for x in (blas["library"], blas["version"]) if x)
    return CheckResult("BLAS", "ok", f"{name}, {threads} threads (via {blas['source']})")


def check_threadpoolctl() -> CheckResult:
    module, error = _import("threadpoolctl")
    if module is None:
        return CheckResult(
            "threadpoolctl",
            "warn",
            "not installed: BLAS threads are neither recorded nor limited (threads=)",
            "pip install threadpoolctl (a dependency of everyo: reinstalling everyo brings it)",
        )
    return CheckResult("threadpoolctl", "ok", _version(module))


def check_cupy() -> CheckResult:
    cupy, error = _import("cupy")
    if cupy is None:
        detail = "not installed" if "No module named 'cupy'" in error else f"broken: {error}"
        return CheckResult("CuPy", "warn", detail, CUDA_FIX)
    return CheckResult("CuPy", "ok", _version(cupy))


def check_cuda_device() -> CheckResult:
    if os.environ.get("EVERYO_DISABLE_CUDA") == "1":
        return CheckResult(
            "CUDA device",
            "info",
            "not checked: EVERYO_DISABLE_CUDA=1",
            "unset EVERYO_DISABLE_CUDA to let everyo use a GPU",
        )
    cupy, _ = _import("cupy")
    if cupy is None:
        return CheckResult("CUDA device", "warn", "none visible (CuPy is not installed)", CUDA_FIX)
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        if count:
            int(cupy.arange(4).sum())  # a device that cannot run a kernel is not usable
    except Exception as exc:
        return CheckResult(
            "CUDA device",
            "warn",
            f"unusable: {type(exc).__name__}: {exc}",
            "check that nvidia-smi lists the GPU and that the CuPy package matches the driver's "
            'CUDA major version ("everyo[cuda12]" or "everyo[cuda13]")',
        )
    if count == 0:
        return CheckResult(
            "CUDA device", "warn", "none visible", "check nvidia-smi and CUDA_VISIBLE_DEVICES"
        )
    name = cupy.cuda.runtime.getDeviceProperties(0).get("name", b"?")
    name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
    return CheckResult("CUDA device", "ok", f"{count} visible; cuda:0 is {name}")


def check_disable_cuda() -> CheckResult:
    value = os.environ.get("EVERYO_DISABLE_CUDA")
    if value is None:
        return CheckResult("EVERYO_DISABLE_CUDA", "ok", "not set")
    return CheckResult(
        "EVERYO_DISABLE_CUDA",
        "info",
        f"set to {value!r}: everyo will not use a GPU",
        "unset EVERYO_DISABLE_CUDA to allow CUDA",
    )


def lab_check(module_name: str, minimum_major: int | None = None, *, load: bool = True) -> Check:
    """A check that ``module_name`` (one of the ``lab`` extras) is there, at a minimum major.

    ``load=False`` reads the installed version without importing: jupyterlab is the server
    side, never imported by a kernel, and importing it costs seconds.
    """

    def check() -> CheckResult:
        name = f"{module_name} (lab)"
        version, error = _lab_version(module_name, load)
        if version is None:
            return CheckResult(name, "warn", f"cannot import ({error})", LAB_FIX)
        major = version.split(".")[0]
        if minimum_major is not None and major.isdigit() and int(major) < minimum_major:
            return CheckResult(name, "warn", f"{version} is older than {minimum_major}", LAB_FIX)
        return CheckResult(name, "ok", version)

    check.__name__ = f"check_lab_{module_name}"
    return check


def _lab_version(module_name: str, load: bool) -> tuple[str | None, str | None]:
    if load:
        module, error = _import(module_name)
        return (None, error) if module is None else (_version(module), None)
    try:
        return importlib.metadata.version(module_name), None
    except importlib.metadata.PackageNotFoundError:
        return None, f"{module_name} is not installed"


def check_chromium() -> CheckResult:
    found = shutil.which("chromium") or (str(CHROMIUM) if CHROMIUM.exists() else None)
    if found is None:
        return CheckResult(
            "chromium",
            "warn",
            "not found (needed only by the browser tests)",
            "sudo apt-get install chromium",
        )
    return CheckResult("chromium", "ok", found)


def check_machine_load() -> CheckResult:
    """The machine's load now (0.5 s) and the BLAS/OpenMP threads: whether measurements here
    can be trusted, and what ``threads="auto"`` would do."""
    from everyo.machine_state import current_load, threads_in_use
    from everyo.thread_policy import choose_threads

    state = current_load(0.5)
    inuse = threads_in_use()
    blas = inuse["blas"] or 1
    detail = f"{state.verdict}: {state.reason}"
    if state.verdict == "unknown":
        return CheckResult(
            "machine load",
            "info",
            detail,
            "on Linux everyo reads /proc; elsewhere pip install psutil to read other processes' "
            "CPU use",
        )
    if state.verdict == "quiet":  # (what "auto" does here, so the note reads on a busy day)
        return CheckResult(
            "machine load",
            "ok",
            f"{detail}; threads='auto' leaves them while the machine is quiet and limits them "
            "when other processes get busy",
        )
    limit = choose_threads("auto", state)
    advice = (
        f"threads='auto' (the default of benchmark(), sweeps and %%everyo_profile) would limit "
        f"BLAS to {limit} thread{'s' if limit != 1 else ''} here"
        if limit is not None
        else f"BLAS already uses {blas} thread{'s' if blas != 1 else ''}"
    )
    return CheckResult(
        "machine load",
        "warn",
        detail,
        f"{advice}; compare figures only with figures measured under the same load, and "
        "rerun important measurements when the machine is quiet",
    )


CHECKS: list[Check] = [
    check_python,
    check_numpy,
    check_blas,
    check_threadpoolctl,
    check_machine_load,
    check_cupy,
    check_cuda_device,
    check_disable_cuda,
    lab_check("jupyterlab", 4, load=False),
    lab_check("ipykernel"),
    lab_check("ipywidgets", 8),
    lab_check("anywidget"),
    lab_check("plotly", 6),
    lab_check("pandas"),
    check_chromium,
]


def run_checks(checks: list[Check]) -> list[CheckResult]:
    """Run every check; one that raises is reported as a failure instead of stopping the rest."""
    results = []
    for check in checks:
        try:
            results.append(check())
        except Exception as exc:
            name = getattr(check, "__name__", repr(check)).removeprefix("check_")
            results.append(
                CheckResult(
                    name,
                    "fail",
                    f"the check itself raised {type(exc).__name__}: {exc}",
                    "report this as an everyo bug, with the output of `python -m everyo info`",
                )
            )
    return results


def format_result(result: CheckResult) -> str:
    tag = {"ok": "[ok]", "info": "[info]", "warn": "[warn]", "fail": "[FAIL]"}[result.status]
    line = f"{tag:<6} {result.name}: {result.detail}"
    if result.status != "ok" and result.fix:
        line += f"\n       fix: {result.fix}"
    return line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "Exit code 1 when a required check fails; warnings alone exit 0."


def run(args: argparse.Namespace) -> int:
    results = run_checks(CHECKS)
    for result in results:
        print(format_result(result))
    counts = {s: sum(r.status == s for r in results) for s in ("ok", "info", "warn", "fail")}
    print(
        f"\n{counts['ok']} ok, {counts['warn']} warnings, {counts['fail']} failed"
        + (f", {counts['info']} notes" if counts["info"] else "")
    )
    return 1 if counts["fail"] else 0
