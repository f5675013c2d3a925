"""Names -> implementations, so that ``index="btree"`` or ``--evaluator substitution`` resolve.

Entries are registered either as classes or lazily as ``"module:attribute"`` strings with the
extra that provides their optional dependencies, so nothing is imported until it is used and a
missing dependency names the extra to install. Researchers register their own classes with
``INDEXES.register("mine", MyIndex)``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from herbrand.framework.errors import MissingDependencyError, UnknownComponentError


@dataclass(frozen=True)
class _Entry:
    target: object  # a class, or "module:attribute"
    extra: str | None


class Registry:
    """One kind of component (index, evaluator, fixpoint, backend, incremental engine)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, _Entry] = {}

    def register(self, name: str, target: object, *, extra: str | None = None) -> None:
        """Register ``target`` (a class or a ``"module:attribute"`` path) under ``name``."""
        self._entries[name] = _Entry(target, extra)

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._entries))

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def check(self, name: str) -> None:
        """UnknownComponentError when ``name`` is not registered (nothing is imported)."""
        if name not in self._entries:
            known = ", ".join(self.names()) or "none"
            raise UnknownComponentError(f"unknown {self.kind} {name!r}; known: {known}")

    def get(self, name: str):
        """The implementation registered as ``name``, imported on first use."""
        self.check(name)
        entry = self._entries[name]
        if not isinstance(entry.target, str):
            return entry.target
        module_name, _, attribute = entry.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            if entry.extra is None:
                raise
            raise MissingDependencyError(
                f"{self.kind} {name!r} needs {error.name}; "
                f"install it with: pip install 'herbrand[{entry.extra}]'"
            ) from error
        target = getattr(module, attribute)
        self._entries[name] = _Entry(target, entry.extra)
        return target


INDEXES = Registry("index")
EVALUATORS = Registry("evaluator")
FIXPOINTS = Registry("fixpoint")
BACKENDS = Registry("backend")
INCREMENTAL_ENGINES = Registry("incremental engine")
