"""Attributes replaced while a profile runs, and put back, all of them, whatever happens."""

from __future__ import annotations

_MISSING = object()


class Patches:
    """A stack of replaced attributes; :meth:`restore` puts each back, newest first.

    The value put back is what the class or module held in its own namespace (``vars(owner)``),
    so a method a class inherited is removed again rather than copied into the class.
    """

    def __init__(self):
        self._saved: list[tuple[object, str, object]] = []

    def set(self, owner, name: str, value) -> None:
        """Replace ``owner.name`` by ``value`` until :meth:`restore`."""
        self._saved.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, value)

    def restore(self) -> None:
        """Put every replaced attribute back; an error in one does not keep the others from
        being restored (the first error is raised once all are back). Safe to call again after
        an interrupt stopped it: it does what is left."""
        first = None
        while self._saved:
            owner, name, old = self._saved[-1]  # forgotten once put back: an interrupt
            try:  # between the two leaves it to the next restore, which puts it back again
                if old is _MISSING:
                    if name in vars(owner):
                        delattr(owner, name)
                else:
                    setattr(owner, name, old)
            except Exception as e:  # noqa: BLE001 - restore the rest, then raise
                first = first or e
            self._saved.pop()
        if first is not None:
            raise first

    def __len__(self) -> int:
        return len(self._saved)
