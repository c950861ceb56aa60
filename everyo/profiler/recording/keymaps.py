"""Module identity and paths while recording: one keymap per outermost module.

A keymap maps ``id(module)`` to the module's entry ``(store key, scope token, [last shapes])``
for every module under one outermost module (its ``named_modules()`` give the paths). An id is
only a module's while it lives: every keymapped module is watched by weak reference, and when
it dies its id leaves every keymap before its memory can be reused, and the recorder's compiled
look-up cache is told to start over (ARCHITECTURE.md, "Identity").
"""

from __future__ import annotations

import weakref

LABELS: dict = {}
"""Module classes (``"module.QualName"``) whose events are named by a function of the module
rather than by the class's name (a framework adapter's compiled wrappers: ``compiled Net``),
named by text so that an adapter need not import a class to name it; empty unless one is
installed."""


def label(module) -> str:
    """The event name of ``module``: its class's name, unless :data:`LABELS` names it."""
    cls = type(module)
    named = LABELS.get(f"{cls.__module__}.{cls.__qualname__}") if LABELS else None
    return cls.__name__ if named is None else named(module)


def new_entry(key: int, name: str, path: str) -> tuple:
    """A module's entry: (key, scope token, [last shapes]).

    The last item holds one tuple ``((input shape, output shape, depth), packed int)`` of the
    module's last single-input call, replaced whole (so threads never see half of one).
    """
    return key, (name, path), [(None, 0)]


class Keymaps:
    """The keymaps of one recorder, keyed by ``id(outermost module)`` (``roots``, which the
    module-call primitives read through ``configure(roots=...)``)."""

    def __init__(self, store, on_forget):
        self.store = store
        self.on_add = None  # called (module, entry) as a module gets its entry (adapters' hooks)
        self.roots: dict[int, dict] = {}  # id(outermost module) -> its keymap, while it lives
        self._watched: dict[int, weakref.ref | None] = {}  # id(module) -> ref that forgets it
        self._pinned: list = []  # keymapped objects without weak references: kept alive
        self._on_forget = on_forget  # a module died: cached look-ups must start over

    def for_root(self, module, refresh: bool = False) -> dict:
        """The outermost module's keymap: one per outermost module while it lives, made on its
        first call and, with ``refresh``, brought up to date in place with its tree (an entry
        once made stays while its module lives)."""
        keymap = self.roots.get(id(module))
        if keymap is not None and not refresh:
            return keymap
        if keymap is None:
            keymap = {}
            self._watch(module)
            self.roots[id(module)] = keymap
        named = getattr(module, "named_modules", None)
        pairs = named() if named is not None else [("", module)]
        for path, m in pairs:
            if id(m) not in keymap:
                self._add(keymap, m, path)
        if id(module) not in keymap:
            self._add(keymap, module, "")
        return keymap

    def unlisted(self, root, module, scope) -> tuple[dict, tuple]:
        """``(root's keymap, module's entry)`` for a module called inside ``root`` but missing
        from its keymap: the tree may have changed since the keymap was made, so look again
        before inventing a path (under ``scope``, the innermost running module's)."""
        keymap = self.for_root(root, refresh=True)
        entry = keymap.get(id(module))
        if entry is None:
            parent_path = scope[1] if scope else ""
            name = label(module)
            path = f"{parent_path}.{name}" if parent_path else name
            entry = self._add(keymap, module, path)
        return keymap, entry

    def _add(self, keymap: dict, module, path: str) -> tuple:
        name = label(module)
        self._watch(module)
        key = self.store.intern_key("module", name, path)
        entry = keymap[id(module)] = new_entry(key, name, path)
        if self.on_add is not None:
            self.on_add(module, entry)
        return entry

    def _watch(self, module) -> None:
        mid = id(module)
        if mid in self._watched:
            return
        try:
            self._watched[mid] = weakref.ref(module, lambda _, mid=mid: self._forget(mid))
        except TypeError:  # no weak references: keep it alive, so that its id stays its own
            self._watched[mid] = None
            self._pinned.append(module)

    def _forget(self, mid: int) -> None:
        """A watched module died: no keymap may lend its entry to the next object at its address
        (runs inside that module's deallocation, before its memory is reused)."""
        self._on_forget()
        self.roots.pop(mid, None)
        for keymap in list(self.roots.values()):
            keymap.pop(mid, None)
        self._watched.pop(mid, None)
