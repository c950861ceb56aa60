"""The environment record every benchmark and every profiled run stores: versions, BLAS, CPU,
memory, GPU, git commit (neutral ground: `everyo.bench` and `everyo.profiler` both import it).

>>> import everyo as eo
>>> env = eo.environment()
>>> sorted(env)[:3]
['cpu', 'cuda', 'everyo']

Every probe is defensive: a missing tool or an unreadable file gives ``None`` (or ``[]`` for GPUs),
never an exception, because a benchmark must not fail for want of a descriptive field.
CuPy is imported inside the GPU probe only, so ``import everyo`` stays free of it.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from everyo import _compiled
from everyo._version import __version__
from everyo.git_record import git_record

__all__ = ["blas_info", "environment", "format_environment"]

_COMMAND_TIMEOUT_S = 2.0
_NVIDIA_SMI_TIMEOUT_S = 3.0


def environment(*, git_status: bool = False) -> dict[str, Any]:
    """Describe the machine and software this process runs on.

    Parameters
    ----------
    git_status : bool
        Also run ``git status`` (with ``core.fsmonitor`` off) to fill ``git["dirty"]``. Off by
        default: the commit is read from the repository's files, so no git process, and none of
        the repository's hooks, runs when a profile is exported.

    Returns
    -------
    dict
        A plain, JSON-serialisable dict with the keys ``everyo``, ``python``, ``numpy``, ``os``,
        ``cpu``, ``memory``, ``cuda``, ``gpus`` (a list, empty without a usable GPU) and ``git``
        (``{"commit", "dirty", "root"}``, ``dirty`` ``None`` unless ``git_status``; ``None``
        outside a git work tree).

    Examples
    --------
    >>> import json, everyo as eo
    >>> record = json.loads(json.dumps(eo.environment()))
    >>> record["everyo"]["version"] == eo.__version__
    True
    """
    cuda, gpus = _cuda()
    return {
        "everyo": {
            "version": __version__,
            "profiler_recorder": _profiler_recorder(),
            "module_call": _module_call(),
            "profiler_sampler": _profiler_sampler(),
            "machine_reader": _machine_reader(),
            "flush_denormal": _flush_denormal(),
        },
        "python": _python(),
        "numpy": _numpy(),
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "platform": _platform(),
        },
        "cpu": _cpu(),
        "memory": {"total_bytes": _total_memory()},
        "cuda": cuda,
        "gpus": gpus,
        "git": git_record(Path.cwd(), status=git_status),
    }


def _profiler_recorder() -> str:
    """``"c"`` where the profiler's compiled module-call path is in use, else ``"python"``."""
    return "c" if _compiled.load("everyo.profiler.recording._crecorder") is not None else "python"


def _module_call() -> str:
    """``"c"`` where ``Module.__call__`` is compiled and enters the compiled recorder directly,
    ``"c, module_call by name"`` where the recorder's contract did not match, else
    ``"python"``."""
    from everyo.nn.module import IMPLEMENTATION

    return IMPLEMENTATION


def _profiler_sampler() -> str:
    """How the stack sampler samples the main thread: ``"c"`` where its compiled path is built,
    else ``"python"`` (a timer signal and a Python handler); ``EVERYO_SAMPLER=signal`` or
    ``thread`` forces ``"python (signal)"`` or ``"python (thread)"``, and a value it refuses
    is recorded as it is, with ``(refused)`` (issue 44: the record said ``c`` regardless)."""
    from everyo.profiler.sampling.sampler import PATHS

    built = _compiled.load("everyo.profiler.sampling._csampler") is not None
    forced = os.environ.get("EVERYO_SAMPLER", "")
    if forced and forced not in PATHS:
        return f"{forced[:40]} (refused)"
    if forced in ("signal", "thread"):
        return f"python ({forced})"
    if forced == "c" and not built:
        return "c (refused: not built)"
    return "c" if built else "python"


def _machine_reader() -> str:
    """``"c"`` where the machine state's compiled reader is in use, else ``"python"`` (also
    where it is built but this process may run on some CPUs only: their lines are summed in
    Python)."""
    from everyo import machine_state

    built = _compiled.load("everyo._cmachine") is not None
    return "c" if built and machine_state._all_cpus_usable() else "python"


def _flush_denormal() -> bool:
    """Whether the engine's backward passes and optimizer steps flush subnormal floats to zero
    now (:func:`everyo.set_flush_denormal`; a step's time depends on it once a model fits)."""
    from everyo.core import float_mode

    return float_mode.flushing()


def _python() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }


def _numpy() -> dict[str, Any]:
    try:
        import numpy
    except Exception as exc:  # numpy is a dependency, but the record must still be writable
        return {"version": None, "error": f"{type(exc).__name__}: {exc}", "blas": None}
    return {"version": numpy.__version__, "blas": blas_info()}


def blas_info() -> dict[str, Any] | None:
    """The BLAS library NumPy uses and its thread count, or ``None`` when it cannot be told.

    threadpoolctl inspects the libraries actually loaded (so it sees thread limits set at run
    time); without it, NumPy's build configuration names the library but not the live thread count.
    """
    return _blas_from_threadpoolctl() or _blas_from_numpy_config()


def _blas_from_threadpoolctl() -> dict[str, Any] | None:
    try:
        import numpy  # noqa: F401  (load NumPy's BLAS so threadpoolctl can see it)
        from threadpoolctl import threadpool_info

        pools = [p for p in threadpool_info() if p.get("user_api") == "blas"]
    except Exception:
        return None
    if not pools:
        return None
    pool = pools[0]
    return {
        "library": pool.get("internal_api"),
        "version": pool.get("version"),
        "threads": pool.get("num_threads"),
        "threading_layer": pool.get("threading_layer"),
        "architecture": pool.get("architecture"),
        "filepath": pool.get("filepath"),
        "source": "threadpoolctl",
    }


def _blas_from_numpy_config() -> dict[str, Any] | None:
    try:
        import numpy

        config = numpy.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
    except Exception:  # old NumPy without mode="dicts", or a changed layout
        return None
    if not blas.get("found", True) or not blas.get("name"):
        return None
    return {
        "library": blas.get("name"),
        "version": blas.get("version"),
        "threads": _threads_from_env(),
        "threading_layer": None,
        "architecture": None,
        "filepath": None,
        "source": "numpy.show_config",
    }


def _threads_from_env() -> int | None:
    # Without threadpoolctl the only knowable limit is the one the user set.
    for var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.isdigit():
            return int(value)
    return None


def usable_cores() -> int | None:
    """The cores this process may run on (its CPU affinity); ``None`` where the OS does not
    say."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every OS
        return None


def _cpu() -> dict[str, Any]:
    return {
        "model": _cpu_model(),
        "machine": platform.machine(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable_cores(),
    }


def _cpu_model() -> str | None:
    # x86 says "model name"; some ARM kernels only say "Hardware" or "Model".
    fields = _read_proc("/proc/cpuinfo")
    for key in ("model name", "Hardware", "Model", "cpu model"):
        if fields.get(key):
            return fields[key]
    return platform.machine() or None


def _platform() -> str:
    """``platform.platform()`` without ``uname().processor`` on Linux, where it is not part of
    the string: it runs ``uname -p`` under a lock, and a child forked while another thread
    holds that lock (a run's first export) would wait for it for ever (issue 44)."""
    if platform.system() != "Linux":
        return platform.platform()
    libc, version = platform.libc_ver()
    parts = [platform.system(), platform.release(), platform.machine(), "with", libc + version]
    return "-".join(p for p in parts if p)


def _total_memory() -> int | None:
    mem_total = _read_proc("/proc/meminfo").get("MemTotal", "")
    if mem_total.endswith(" kB") and mem_total[:-3].strip().isdigit():
        return int(mem_total[:-3]) * 1024
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _read_proc(path: str) -> dict[str, str]:
    """``key: value`` lines of a /proc file; the first occurrence of each key wins."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    return fields


def _cuda() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    disabled = os.environ.get("EVERYO_DISABLE_CUDA") == "1"
    cuda: dict[str, Any] = {
        "disabled": disabled,
        "cupy": None,
        "runtime_version": None,
        "driver_version": None,
        "cuda_driver_version": None,
    }
    if disabled:  # respect the user's wish not to touch CUDA at all
        return cuda, []
    try:
        import cupy

        cuda["cupy"] = cupy.__version__
        runtime = cupy.cuda.runtime
        count = runtime.getDeviceCount()
        cuda["runtime_version"] = _cuda_version(runtime.runtimeGetVersion())
        cuda["cuda_driver_version"] = _cuda_version(runtime.driverGetVersion())
        gpus = [_gpu(runtime, i) for i in range(count)]
    except Exception:  # no CuPy, no driver, no device: all mean "no GPU", never a crash
        return cuda, []
    cuda["driver_version"] = _nvidia_driver_version() if gpus else None
    return cuda, gpus


def _gpu(runtime: Any, index: int) -> dict[str, Any]:
    props = runtime.getDeviceProperties(index)
    name = props.get("name", b"")
    return {
        "index": index,
        "name": name.decode(errors="replace") if isinstance(name, bytes) else str(name),
        "memory_bytes": int(props.get("totalGlobalMem", 0)) or None,
        "compute_capability": f"{props.get('major', '?')}.{props.get('minor', '?')}",
        "multiprocessors": props.get("multiProcessorCount"),
    }


def _cuda_version(code: int) -> str:
    """CUDA encodes versions as 1000 * major + 10 * minor (12040 → "12.4")."""
    return f"{code // 1000}.{(code % 1000) // 10}"


def _nvidia_driver_version() -> str | None:
    # The kernel driver's version (e.g. "550.54.15") is not exposed by the CUDA runtime.
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    out = _run(
        [exe, "--query-gpu=driver_version", "--format=csv,noheader"], timeout=_NVIDIA_SMI_TIMEOUT_S
    )
    return out.splitlines()[0].strip() if out else None


def _run(
    cmd: list[str], *, cwd: Path | None = None, timeout: float = _COMMAND_TIMEOUT_S
) -> str | None:
    """stdout of a command, stripped; ``None`` when it is missing, fails or hangs."""
    try:
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def format_environment(env: dict[str, Any]) -> str:
    """Render an :func:`environment` record as aligned ``label  value`` lines for people."""
    rows = [
        ("everyo", _format_everyo(env["everyo"])),
        ("python", _format_python(env["python"])),
        ("numpy", env["numpy"]["version"] or env["numpy"].get("error")),
        ("blas", _format_blas(env["numpy"]["blas"])),
        ("os", f"{env['os']['system']} {env['os']['release']}"),
        ("cpu", _format_cpu(env["cpu"])),
        ("memory", _format_bytes(env["memory"]["total_bytes"])),
        ("cuda", _format_cuda(env["cuda"])),
    ]
    rows += _format_gpus(env["gpus"])
    rows.append(("git", _format_git(env["git"])))
    width = max(len(label) for label, _ in rows)
    return "\n".join(f"{label:<{width}}  {value}" for label, value in rows)


def _format_everyo(record: dict[str, Any]) -> str:
    impl = record.get("profiler_recorder")
    if impl == "python":
        impl = "python (no compiled extension: pip install -e . with a C compiler)"
    text = f"{record['version']}, profiler_recorder: {impl}"
    if record.get("module_call"):  # (records from before it was recorded have none)
        text += f", module_call: {record['module_call']}"
    if "profiler_sampler" in record:  # (records written before the compiled sampler lack it)
        text += f", profiler_sampler: {record['profiler_sampler']}"
    if record.get("machine_reader"):  # (records from before it was recorded have none)
        text += f", machine_reader: {record['machine_reader']}"
    if "flush_denormal" in record:  # (records from before it was recorded have none)
        text += f", flush_denormal: {'on' if record['flush_denormal'] else 'off'}"
    return text


def _format_python(py: dict[str, Any]) -> str:
    return f"{py['version']} ({py['implementation']}) {py['executable']}"


def _format_blas(blas: dict[str, Any] | None) -> str:
    if blas is None:
        return "not detected (pip install threadpoolctl)"
    text = " ".join(str(x) for x in (blas["library"], blas["version"]) if x)
    threads = blas["threads"]
    text += f", {threads} threads" if threads is not None else ", threads unknown"
    return text + (f" [{blas['threading_layer']}]" if blas.get("threading_layer") else "")


def _format_cpu(cpu: dict[str, Any]) -> str:
    cores = f"{cpu['logical_cores']} logical cores"
    if cpu["usable_cores"] not in (None, cpu["logical_cores"]):
        cores += f", {cpu['usable_cores']} usable"
    return f"{cpu['model'] or cpu['machine'] or 'unknown'} ({cores})"


def _format_cuda(cuda: dict[str, Any]) -> str:
    if cuda["disabled"]:
        return "disabled (EVERYO_DISABLE_CUDA=1)"
    if cuda["cupy"] is None:
        return "CuPy not installed"
    parts = [f"CuPy {cuda['cupy']}"]
    if cuda["runtime_version"]:
        parts.append(f"runtime {cuda['runtime_version']}")
    if cuda["driver_version"] or cuda["cuda_driver_version"]:
        parts.append(f"driver {cuda['driver_version'] or cuda['cuda_driver_version']}")
    return ", ".join(parts)


def _format_gpus(gpus: list[dict[str, Any]]) -> list[tuple[str, str]]:
    if not gpus:
        return [("gpu", "none")]
    return [
        (
            f"gpu {g['index']}",
            f"{g['name']}, {_format_bytes(g['memory_bytes'])}, compute {g['compute_capability']}",
        )
        for g in gpus
    ]


def _format_git(git: dict[str, Any] | None) -> str:
    if git is None:
        return "not a git work tree"
    return git["commit"][:12] + (" (dirty)" if git["dirty"] else "")


def _format_bytes(n: int | None) -> str:
    if n is None:
        return "unknown"
    return f"{n / 2**30:.1f} GiB"
