"""Is a baseline from this machine? The hardware fields of two environment records compared.

Times measured on another machine (another CPU, core count, GPU), or on this one with other
settings (another BLAS thread count, the engine's subnormal flushing switched), are not
comparable, so a regression check against such a baseline says so next to its verdict.
"""

from __future__ import annotations

from typing import Any

__all__ = ["machine_differences", "only_settings_differ"]


def _gib(n: Any) -> str:
    return f"{n / 2**30:.1f} GiB" if isinstance(n, (int, float)) else repr(n)


# (label, path into the environment record of :func:`everyo.environment`, how to show a value)
_FIELDS = (
    ("CPU", ("cpu", "model"), repr),
    ("architecture", ("cpu", "machine"), repr),
    ("logical cores", ("cpu", "logical_cores"), repr),
    ("usable cores", ("cpu", "usable_cores"), repr),
    ("memory", ("memory", "total_bytes"), _gib),
    ("OS", ("os", "system"), repr),
    ("BLAS", ("numpy", "blas", "library"), repr),
    ("BLAS threads", ("numpy", "blas", "threads"), repr),
    # (a training step's time depends on it once a model fits: docs/engine.md)
    ("subnormal flushing", ("everyo", "flush_denormal"), lambda on: "on" if on else "off"),
)


# the fields a process sets on any machine (the others are the hardware it runs on)
_SETTINGS = ("BLAS threads", "subnormal flushing")


def only_settings_differ(differences) -> bool:
    """Whether every phrase of :func:`machine_differences` is a setting (BLAS threads, subnormal
    flushing), not the hardware: the baseline may well be from this machine.

    >>> only_settings_differ(["subnormal flushing on vs off"])
    True
    >>> only_settings_differ(["CPU 'Xeon A' vs 'Xeon B'", "BLAS threads 8 vs 1"])
    False
    """
    return bool(differences) and all(
        any(d.startswith(f"{label} ") for label in _SETTINGS) for d in differences
    )


def _get(env: dict, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(env, dict):
            return None
        env = env.get(key)
    return env


def _gpus(env: dict) -> list[str]:
    return [str(g.get("name")) for g in env.get("gpus") or [] if isinstance(g, dict)]


def machine_differences(baseline: dict | None, current: dict | None) -> list[str]:
    """What differs between the machines of two environment records, as short phrases
    (``"CPU 'Xeon A' vs 'Xeon B'"``); empty when they match or either record is missing.

    Fields missing from either record are not compared, so an older baseline without, say,
    ``usable_cores`` is not reported as another machine for that alone.

    >>> a = {"cpu": {"model": "Xeon A", "logical_cores": 8}, "gpus": []}
    >>> b = {"cpu": {"model": "Xeon B", "logical_cores": 8}, "gpus": []}
    >>> machine_differences(a, b)
    ["CPU 'Xeon A' vs 'Xeon B'"]
    """
    if not isinstance(baseline, dict) or not isinstance(current, dict):
        return []
    out = []
    for label, path, show in _FIELDS:
        old, new = _get(baseline, path), _get(current, path)
        if old is not None and new is not None and old != new:
            out.append(f"{label} {show(old)} vs {show(new)}")
    if "gpus" in baseline and "gpus" in current and _gpus(baseline) != _gpus(current):
        out.append(f"GPUs {_gpus(baseline) or 'none'} vs {_gpus(current) or 'none'}")
    return out
