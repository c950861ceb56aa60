"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from everyo.nn.module import Module

__all__ = ["Sequential", "ModuleList", "ModuleDict"]


def _check(module, where: str) -> Module:
    if not isinstance(module, Module):
        raise TypeError(f"{where} holds Modules only, got {type(module).__name__}")
    return module


class ModuleList(Module):
    """A list of modules, registered as children ``"0"``, ``"1"``, ...

    >>> import everyo as eo
    >>> layers = eo.ModuleList([eo.Linear(2, 2, seed=i) for i in range(3)])
    >>> len(layers), [n for n, _ in layers.named_modules()][:3]
    (3, ['', '0', '1'])
    """

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def _items(self) -> list:
        return list(self._modules.values())

    def _renumber(self, items: list) -> None:
        for name in list(self._modules):
            delattr(self, name)
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._items())

    def __getitem__(self, index):
        items = self._items()
        if isinstance(index, slice):
            return type(self)(items[index])
        return items[_index(index, len(items))]

    def __setitem__(self, index: int, module: Module) -> None:
        name = list(self._modules)[_index(index, len(self))]  # named layers keep their name
        setattr(self, name, _check(module, type(self).__name__))

    def __delitem__(self, index) -> None:
        items = self._items()
        del items[index]
        self._renumber(items)

    def append(self, module: Module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), _check(module, type(self).__name__))
        return self

    def extend(self, modules: Iterable[Module]):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = self._items()
        items.insert(index, _check(module, type(self).__name__))
        self._renumber(items)


class Sequential(ModuleList):
    """Modules applied in order: ``Sequential(a, b, c)(x) == c(b(a(x)))``.

    Supports ``len``, iteration, integer indexing, slicing (a new ``Sequential`` sharing the
    layers) and ``append``. An ``OrderedDict`` argument names the layers.

    >>> import everyo as eo
    >>> model = eo.Sequential(eo.Linear(4, 16, seed=0), eo.ReLU(), eo.Linear(16, 2, seed=1))
    >>> model(eo.zeros(32, 4)).shape, len(model), type(model[:2]).__name__
    ((32, 2), 3, 'Sequential')
    """

    def __init__(self, *modules: Module) -> None:
        Module.__init__(self)
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, _check(m, "Sequential"))
        else:
            for m in modules:
                self.append(m)

    def __getitem__(self, index):
        if isinstance(index, slice):
            names = list(self._modules)[index]
            if all(n.isdigit() for n in names):
                return Sequential(*(self._modules[n] for n in names))
            return Sequential(OrderedDict((n, self._modules[n]) for n in names))
        if isinstance(index, str):
            return self._modules[index]
        return super().__getitem__(index)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleDict(Module):
    """A dict of modules, registered as children under their keys."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, _check(module, "ModuleDict"))

    def __delitem__(self, key: str) -> None:
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def update(self, modules) -> None:
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, m in pairs:
            self[key] = m


def _index(index: int, n: int) -> int:
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"index {index} is out of range for a container of {n} modules")
    return i % n
