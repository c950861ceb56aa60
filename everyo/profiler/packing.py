"""How a finished event waits in its thread's buffer before it reaches the store.

A buffered event is ``(start, end, packed, *extras)``: key, depth and shape id share one int
(fewer Python ints to convert at flush time, which costs as much as recording them). Shared by
the module path (``capture``) and the region and backward paths (``regions``).
"""

from __future__ import annotations

BUFFER_FIELDS = ("start_ns", "end_ns", "packed")
KEY_BITS, DEPTH_BITS = 24, 16
SHAPE_SHIFT = KEY_BITS + DEPTH_BITS
KEY_MASK = (1 << KEY_BITS) - 1


def pack(key: int, depth: int, shape_id: int = -1) -> int:
    """One int holding an event's key, depth and shape id (-1: none)."""
    return key | depth << KEY_BITS | (shape_id + 1) << SHAPE_SHIFT
