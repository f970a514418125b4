"""A patch of another package's internals checks, when it is applied, that it replaces what it was written for.

The course reaches into mongoeco's and mongomock's internals (:mod:`course.store.quirks` and the modules it
applies).  Each patch maker declares the source of the function it replaces, as a digest
(:func:`written_for`); :func:`check_replaced` compares it with the installed function before anything is
patched and raises :class:`PatchMismatch`, which names the function, the release the patch was written for
and what to do, instead of patching a function another release changed.  ``course doctor`` reports it and
``tests/test_patch_check.py`` asserts it.

A new quirk module needs two lines: ``@written_for("<digest>")`` on its patch maker, and the maker applied
through :func:`course.store.patching.apply_patch` (or :func:`check_replaced` called before it patches).  The digest of a
function is :func:`source_digest` of it (``python -m course.store.patch_check mongoeco.engines.memory
MemoryEngine.create_index`` prints it).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata as metadata
import inspect
import linecache
import sys
from typing import Any, Callable

#: package -> the release every patch of it was written and tested for (pyproject.toml pins its series)
WRITTEN_FOR = {"mongoeco": "4.11.0", "mongomock": "4.3.0"}
_DIGESTS = "_course_written_for"


class PatchMismatch(RuntimeError):
    """A function the course would patch is not the one its patch was written for (another release)."""


def source_digest(code: Any) -> str:
    """The first 16 hex digits of the SHA-256 of ``code``'s source (a function, class or module; or the
    source text itself), or ``"unreadable"`` when its source cannot be read."""
    if isinstance(code, str):
        text = code
    else:
        try:
            text = _source(code)
        except (OSError, TypeError, IndexError, SyntaxError):
            return "unreadable"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _source(code: Any) -> str:
    """``inspect.getsource(code)``; for a function, read straight from its file (the same text, without
    inspect's search of every loaded module for the function's own: a few milliseconds per kernel start)."""
    function = inspect.unwrap(code) if callable(code) else code
    body = getattr(function, "__code__", None)
    if body is None:
        return inspect.getsource(code)
    lines = linecache.getlines(body.co_filename)
    if not lines:
        raise OSError(f"no source for {body.co_filename}")
    return "".join(inspect.getblock(lines[body.co_firstlineno - 1:]))


def written_for(*digests: str) -> Callable[[Callable], Callable]:
    """Decorate a patch maker with the source digest(s) of the function(s) it was written to replace."""
    def mark(make: Callable) -> Callable:
        setattr(make, _DIGESTS, tuple(digests))
        return make

    return mark


def installed_version(package: str) -> str:
    """The installed version of ``package``, or ``"not installed"``."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def mismatch(package: str, what: str, detail: str, patch: str) -> PatchMismatch:
    """The error for a patch of ``package``'s ``what`` that does not fit the installed release."""
    release = WRITTEN_FOR.get(package, "?")
    return PatchMismatch(
        f"{patch} patches {package}'s {what}, written for {package} {release}, but {detail} in the installed "
        f"{package} {installed_version(package)}: the course does not patch it. Install the release it was "
        f"tested on (pyproject.toml pins {package}=={release.rsplit('.', 1)[0]}.*: `make clean venv`, or "
        f"`pip install -e .`), or update the patch and its digest (see course/store/patch_check.py).")


def check_replaced(original: Callable, make: Callable, package: str = "mongoeco", what: str = "") -> None:
    """Raise :class:`PatchMismatch` unless ``original``'s source is one that ``make`` was written for
    (``what``: how to name it, e.g. ``MemoryEngine.create_index``; by default its qualified name)."""
    expected = getattr(make, _DIGESTS, None)
    if expected is None:
        raise PatchMismatch(f"{_where(make)}: {make.__name__} does not say which {package} function it was "
                            f"written for (decorate it with course.store.patch_check.written_for)")
    check_source(original, expected, package, _where(make), what)


def check_source(original: Any, expected: tuple[str, ...], package: str, patch: str, what: str = "") -> None:
    """Raise :class:`PatchMismatch` unless the source digest of ``original`` is one of ``expected``."""
    found = source_digest(original)
    if found not in expected:
        what = what or getattr(original, "__qualname__", getattr(original, "__name__", repr(original)))
        raise mismatch(package, what, f"its source differs (digest {found}, expected {' or '.join(expected)})",
                       patch)


def check_absent(owner: Any, name: str, package: str = "mongoeco", patch: str = "course/store/mongoeco/absorb.py") -> None:
    """Raise :class:`PatchMismatch` when ``owner`` has ``name``, which the course adds because the release it was
    written for lacks it (a release that has its own would be overridden)."""
    if hasattr(owner, name):
        raise mismatch(package, f"{owner.__qualname__}.{name}", f"{owner.__qualname__} has a {name} of its own",
                       patch)


def _where(make: Callable) -> str:
    return "course/" + make.__module__.split(".", 1)[-1].replace(".", "/") + ".py"


def main(argv: list[str]) -> int:
    """``python -m course.store.patch_check MODULE [QUALNAME]``: print the source digest of a module or a function."""
    if not 1 <= len(argv) <= 2:
        print(main.__doc__, file=sys.stderr)
        return 2
    target: Any = importlib.import_module(argv[0])
    for part in (argv[1].split(".") if len(argv) == 2 else ()):
        target = getattr(target, part)
    print(source_digest(target))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
