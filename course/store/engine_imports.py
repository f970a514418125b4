"""What the engine's dependencies import at start-up and the course does not use, kept off every kernel's start.

Every lab, grading and CI kernel opens the embedded engine, and mongoeco imports all it could ever need as
it loads: jsonschema with every optional format checker, shapely and numpy for geospatial queries and
vector search, cxp for its compatibility catalogue.  Most of it no lesson ever calls.  The course keeps
that cost off ``start_lab`` in two ways, neither of which changes what any call returns:

* :data:`SKIPPED_IMPORTS` are never loaded.  They offer only jsonschema's "format" checkers, which
  MongoDB's ``$jsonSchema`` ignores.
* :data:`DEFERRED_FUNCTIONS` and :data:`DEFERRED_MODULES` are loaded when first used, not when imported.
  A deferred module of functions is first a module of stand-ins, one per top-level function, each of which
  loads the real module into the same module object and calls the real function; any other name loads it
  as well.  A deferred package is a module object that loads the package into itself the first time
  anything is read from it, so ``np.array`` and ``import numpy.linalg`` work as ever.

:func:`skip_unused_imports` installs both (idempotent), before mongoeco is imported.

A module of functions is deferred only when its source is the one the stand-ins were written for
(:data:`WRITTEN_FOR`, mongoeco 4.11's); another release's module is imported as usual (slower, never
wrong), and :func:`problems` says so, which ``course doctor`` and the tests report as an error.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import os
import sys
import threading
import types
from typing import Any, Callable

#: Modules that jsonschema imports, when installed (JupyterLab's jupyter-events installs them), only to
#: offer a "format" checker: rfc3987_syntax builds a parser grammar at import (about 1.7 s;
#: python-jsonschema/jsonschema issue 1428), isoduration brings arrow, and the rest cost tens of
#: milliseconds each.  MongoDB's $jsonSchema ignores "format", so no validator the course runs can tell.
SKIPPED_IMPORTS = ("rfc3987_syntax", "isoduration", "rfc3986_validator", "rfc3339_validator", "webcolors",
                   "uri_template", "fqdn", "jsonpointer")

#: module -> the calls that need it: imported by name at start-up, called only by those
DEFERRED_FUNCTIONS = {
    "mongoeco.core.geo": "geospatial queries and stages ($geoWithin, $near, $geoNear): it imports shapely "
                         "and, with it, numpy",
    "mongoeco.compat._catalog_export": "exporting mongoeco's compatibility catalogue: it imports cxp's "
                                       "document exchange and, with it, jsonschema",
    "mongoeco.cxp.exchange": "explain() output and mongoeco's capability documents: it imports cxp's "
                             "document exchange and, with it, jsonschema",
}

#: deferred module -> the source digest (course.store.patch_check) of the mongoeco 4.11 module it was written for
WRITTEN_FOR = {
    "mongoeco.core.geo": "c38f5d0787cb0cda",
    "mongoeco.compat._catalog_export": "40e3eae8264da598",
    "mongoeco.cxp.exchange": "be6be0a82199aa15",
}
_MISMATCHES: dict[str, str] = {}  #: deferred module -> why it was imported as usual instead

#: package -> what uses it: imported at start-up, read only by that
DEFERRED_MODULES = {
    "numpy": "mongoeco's vector search (and whatever a learner imports numpy for)",
}


def skip_unused_imports() -> None:
    """Keep :data:`SKIPPED_IMPORTS` from loading and defer the deferred ones, in this process (idempotent).

    A ``None`` entry in ``sys.modules`` makes ``import`` raise ImportError, which jsonschema expects for
    an optional format checker and handles by not offering that format.  Modules already imported are
    left as they are.
    """
    for name in SKIPPED_IMPORTS:
        sys.modules.setdefault(name, None)
    if not any(isinstance(finder, _DeferringFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _DeferringFinder())


def problems() -> list[str]:
    """Why a module of :data:`DEFERRED_FUNCTIONS` was imported as usual in this process: its source is not the
    one the course's stand-ins were written for (empty when every deferred module imported so far matched)."""
    return [_MISMATCHES[name] for name in sorted(_MISMATCHES)]


def _written_for(name: str, origin: str) -> bool:
    """True when the source at ``origin`` is the release of module ``name`` the stand-ins were written for
    (for a module of a package the course pins, mongoeco's); otherwise the mismatch is recorded for
    :func:`problems`."""
    from course.store.patch_check import WRITTEN_FOR as PINNED, mismatch, source_digest

    if name.split(".")[0] not in PINNED:
        return True  # not a module of a package the course pins (the tests' own synthetic modules)
    with open(origin, encoding="utf-8") as source:
        found = source_digest(source.read())
    if found == WRITTEN_FOR.get(name):
        return True
    _MISMATCHES[name] = str(mismatch("mongoeco", f"module {name}", f"its source differs (digest {found}, expected "
                                     f"{WRITTEN_FOR.get(name)}), so it was imported as usual (slower, not deferred)",
                                     "course/store/engine_imports.py"))
    return False


def is_deferred(name: str) -> bool:
    """True while module ``name`` is imported but its real code has not run yet."""
    module = sys.modules.get(name)
    return isinstance(module, _DeferredPackage) or (
        module is not None and isinstance(getattr(module, "__loader__", None), _StandInLoader)
        and not module.__loader__.loaded)


def stand_in_names(module: types.ModuleType) -> list[str]:
    """The names a deferred module of functions holds stand-ins for (empty for any other module)."""
    loader = getattr(module, "__loader__", None)
    return list(getattr(loader, "names", ())) if isinstance(loader, _StandInLoader) else []


class _DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds the deferred modules where the path finder would, and hands them a deferring loader."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        """The real spec of a deferred module with its loader wrapped; ``None`` for any other module."""
        if name in DEFERRED_FUNCTIONS:
            wrapper: Callable[[Any], importlib.abc.Loader] = _StandInLoader
        elif name in DEFERRED_MODULES:
            wrapper = _PackageLoader
        else:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not hasattr(spec.loader, "exec_module") or not (spec.origin or "").endswith(".py"):
            return None  # not where we can defer it: import it as usual
        if wrapper is _StandInLoader and not _written_for(name, spec.origin):
            return None  # another release's module: import it as usual (problems() says so)
        spec.loader = wrapper(spec.loader)
        return spec


class _DelegatingLoader(importlib.abc.Loader):
    """A loader that runs the real loader's ``exec_module`` later; every other question goes to the real one."""

    def __init__(self, real: importlib.abc.Loader) -> None:
        self.real = real
        self.loaded = False
        self.lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, is_package...
        return getattr(self.real, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        """Let the import system make the module object, as the real loader would."""
        return self.real.create_module(spec)

    def run_real_code(self, module: types.ModuleType, prepare: Callable[[], None]) -> None:
        """Once: ``prepare()`` the module, then run the real module's code in it."""
        with self.lock:
            if self.loaded:
                return
            self.loaded = True
            prepare()
            try:
                self.real.exec_module(module)
            except BaseException:
                sys.modules.pop(module.__name__, None)  # as a failed import leaves it: the next import retries
                raise


class _StandInLoader(_DelegatingLoader):
    """A module of stand-ins for its top-level functions, until one is called or another name is read."""

    def exec_module(self, module: types.ModuleType) -> None:
        """Fill ``module`` with a stand-in per top-level function and a module ``__getattr__`` that loads."""
        names = self.names = _top_level_functions(module)
        namespace = module.__dict__

        def load() -> None:
            def forget_stand_ins() -> None:
                for name in names:
                    namespace.pop(name, None)
                namespace.pop("__getattr__", None)

            self.run_real_code(module, forget_stand_ins)

        def stand_in_for(name: str) -> Callable[..., Any]:
            def stand_in(*args: Any, **kwargs: Any) -> Any:
                load()
                try:
                    real = namespace[name]
                except KeyError:  # the module's code failed when it was first loaded
                    raise ImportError(f"{module.__name__} could not be loaded (see the first error)") from None
                return real(*args, **kwargs)

            stand_in.__name__ = stand_in.__qualname__ = name
            stand_in.__module__ = module.__name__
            stand_in.__doc__ = f"Loads {module.__name__} (deferred by the course), then calls its {name}."
            return stand_in

        def module_getattr(name: str) -> Any:
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)  # the import system asks for __path__ and the like: no need to load
            load()
            try:
                return namespace[name]
            except KeyError:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}") from None

        for name in names:
            namespace[name] = stand_in_for(name)
        namespace["__getattr__"] = module_getattr


def _defs(path: str) -> tuple[ast.Module, list[str]]:
    """The parsed source at ``path`` and the names of its top-level functions, in order."""
    with open(path, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    return tree, [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _top_level_functions(module: types.ModuleType) -> list[str]:
    """The names ``module``'s top-level code binds to functions: its own ``def``s, and the ``def``s of its
    own submodules that it imports by name (a package re-exporting its functions)."""
    origin = module.__spec__.origin
    tree, names = _defs(origin)
    package = module.__name__ if module.__spec__.submodule_search_locations is not None else module.__package__
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        source_name = node.module if not node.level else ".".join(
            (package.rsplit(".", node.level - 1)[0] if node.level > 1 else package, node.module))
        if not source_name.startswith(module.__name__ + "."):
            continue  # only the module's own submodules: their files are beside it
        stem = os.path.join(os.path.dirname(origin), *source_name[len(module.__name__) + 1:].split("."))
        path = next((p for p in (stem + ".py", os.path.join(stem, "__init__.py")) if os.path.isfile(p)), None)
        if path is None:
            continue
        functions = set(_defs(path)[1])
        names += [alias.asname or alias.name for alias in node.names if alias.name in functions]
    return names


class _DeferredPackage(types.ModuleType):
    """A package whose code runs the first time anything not set at import is read from it."""

    def __getattr__(self, name: str) -> Any:
        self.__dict__["__course_loader__"].load(self)
        return getattr(self, name)

    def __dir__(self) -> list[str]:
        self.__dict__["__course_loader__"].load(self)
        return dir(self)


class _PackageLoader(_DelegatingLoader):
    """Makes a package a :class:`_DeferredPackage` at import and loads it when first read."""

    def exec_module(self, module: types.ModuleType) -> None:
        """Defer: hide ``__path__`` (so that importing a submodule asks for it, and loads) and wait."""
        self.search_path = module.__dict__.pop("__path__", None)
        module.__dict__["__course_loader__"] = self
        module.__class__ = _DeferredPackage

    def load(self, module: types.ModuleType) -> None:
        """Turn ``module`` back into a plain module and run the package's code in it (once)."""
        def restore() -> None:
            module.__class__ = types.ModuleType
            del module.__dict__["__course_loader__"]
            if self.search_path is not None:
                module.__path__ = self.search_path

        self.run_real_code(module, restore)
