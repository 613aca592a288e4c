"""Imports made later: package attributes on first use, code once Keras loads.

The packages whose modules must load without TensorFlow or Keras
(`albert_keras`, `albert_keras.tokenizers`, `albert_keras.training`,
`checkpoints_convert`) name their heavier attributes in a table and use
`lazy_attributes` for their module `__getattr__` (PEP 562). `import
albert_keras` registers the package's Keras classes with `when_imported`, as
soon as Keras is loaded, whichever of the two was imported first.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


def lazy_attributes(package: str, table: dict[str, str]):
    """`__getattr__` and `__dir__` for `package`: `table` maps a name to its module.

    A name is imported from its module when first asked for, then kept in the
    package. Submodules are attributes too: `albert_keras.models` after a
    bare `import albert_keras`.

    Example:
    >>> __getattr__, __dir__ = lazy_attributes(  # doctest: +SKIP
    ...     __name__, {"AlbertTokenizer": "albert_keras.tokenizers.albert_tokenizer"}
    ... )
    """

    def __getattr__(name):
        if name in table:
            value = getattr(importlib.import_module(table[name]), name)
            setattr(sys.modules[package], name, value)
            return value
        if not name.startswith("_") and importlib.util.find_spec(f"{package}.{name}"):
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__


def when_imported(module: str, callback, wait_for: tuple[str, ...] = ()):
    """Calls `callback()` once `module` is imported: now if it already is.

    `wait_for` are modules that may import `module` half-way through their
    own import (TensorFlow imports Keras before it is done): the callback
    then runs when they are done too. A name ending in "." stands for every
    module under it: `"albert_keras."` waits for the package's own modules,
    so a callback importing them never meets one half-imported.
    """
    if module in sys.modules:
        callback()
    else:
        sys.meta_path.insert(0, _ImportWatcher(module, callback, wait_for))


class _ImportWatcher(importlib.abc.MetaPathFinder):
    """Finds the watched modules as the other finders do, with a loader that
    reports when each has run (the post-import hook of wrapt's importer)."""

    def __init__(self, module, callback, wait_for):
        self.module = module
        self.callback = callback
        self.watched = (module, *(name for name in wait_for if name[-1] != "."))
        self.prefixes = tuple(name for name in wait_for if name[-1] == ".")
        self.running = set()
        self.finding = False

    def find_spec(self, fullname, path=None, target=None):
        if self.finding or not (
            fullname in self.watched or fullname.startswith(self.prefixes)
        ):
            return None
        self.finding = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.finding = False
        if spec is not None and spec.loader is not None:
            spec.loader = _ReportingLoader(spec.loader, self)
        return spec

    def ran(self):
        if self.module in sys.modules and not self.running:
            if self in sys.meta_path:
                sys.meta_path.remove(self)
                self.callback()


class _ReportingLoader(importlib.abc.Loader):
    def __init__(self, loader, watcher):
        self.loader = loader
        self.watcher = watcher

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def __getattr__(self, name):
        # The rest of the wrapped loader's interface: `get_code` (what
        # `python -m` runs), `get_source`, `is_package`, resources.
        return getattr(self.loader, name)

    def exec_module(self, module):
        # The module sees its own loader (importlib.resources, reload).
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.watcher.running.add(module.__name__)
        try:
            self.loader.exec_module(module)
        finally:
            self.watcher.running.discard(module.__name__)
        self.watcher.ran()


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it.

    False also for a module blocked with `sys.modules[name] = None` (as the
    tests do to run without TensorFlow).

    Example:
    >>> installed("json"), installed("no_such_module")
    (True, False)
    """
    try:
        return importlib.util.find_spec(module) is not None
    except (ValueError, ImportError):
        return False
