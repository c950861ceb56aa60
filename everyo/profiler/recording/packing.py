"""How a finished event waits in its thread's buffer before it reaches the store.

A buffered event is ``(start, end, packed, *extras)``: key, depth and shape id share one int
(fewer Python ints to convert at flush time, which costs as much as recording them). Shared by
the module path (``capture``) and the region and backward paths (``regions``). The compiled
recorder reads the same layout from ``_packing.h``, generated from here by :func:`c_header`
(``python -m everyo.profiler.recording.packing > everyo/profiler/recording/_packing.h``; a test
checks it is current).
"""

from __future__ import annotations

BUFFER_FIELDS = ("start_ns", "end_ns", "packed")
KEY_BITS, DEPTH_BITS = 24, 16
SHAPE_SHIFT = KEY_BITS + DEPTH_BITS
KEY_MASK = (1 << KEY_BITS) - 1
PLAIN, SHAPES = 1, 2  # the modes whose events the primitives append packed (contract's "mode")


def pack(key: int, depth: int, shape_id: int = -1) -> int:
    """One int holding an event's key, depth and shape id (-1: none)."""
    return key | depth << KEY_BITS | (shape_id + 1) << SHAPE_SHIFT


def c_header() -> str:
    """The text of ``everyo/profiler/recording/_packing.h``: this layout for ``_crecorder.c``."""
    constants = {
        "KEY_BITS": KEY_BITS,
        "DEPTH_BITS": DEPTH_BITS,
        "SHAPE_SHIFT": SHAPE_SHIFT,
        "KEY_MASK": f"{KEY_MASK}LL",
        "MODE_PLAIN": PLAIN,
        "MODE_SHAPES": SHAPES,
    }
    lines = [
        "/* Generated from everyo/profiler/recording/packing.py",
        "   by `python -m everyo.profiler.recording.packing`;",
        "   do not edit (tests/profiler/test_packing.py checks it is current). */",
        "#ifndef EVERYO_PACKING_H",
        "#define EVERYO_PACKING_H",
        *(f"#define {name} {value}" for name, value in constants.items()),
        "#endif",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(c_header(), end="")
