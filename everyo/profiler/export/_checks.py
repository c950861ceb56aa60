"""Checks run before an export writes anything."""

from __future__ import annotations

import json

from everyo.errors import EveryOExportError


def check_metadata(metadata: dict, path) -> None:
    """Raise :class:`EveryOExportError` naming the first metadata key JSON cannot hold."""
    for row, meta in metadata.items():
        try:
            json.dumps(meta, allow_nan=True)
        except (TypeError, ValueError):
            for key, value in meta.items():
                try:
                    json.dumps(value)
                except (TypeError, ValueError):
                    raise EveryOExportError(
                        f"cannot export {path}: metadata {key!r}={value!r} (event row {row}) is "
                        f"a {type(value).__name__}, which JSON cannot hold; pass str, int, "
                        "float, bool, list or dict values (e.g. str(value))"
                    ) from None
            raise EveryOExportError(
                f"cannot export {path}: metadata of event row {row} is not JSON-serialisable"
            ) from None
