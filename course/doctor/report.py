"""``course doctor``: what this environment runs the course on, and what it lacks.

The first lines answer the questions that decide what works: the Python and the backend, whether the
grader's sandbox (bubblewrap) and WiredTiger are there, whether the course's patches of the backend fit
the installed release, and for each missing system prerequisite what it costs and how to install it.
The list of prerequisites, the packages and the capabilities follow; the quirks last, one short line each.
"""

from __future__ import annotations

import importlib.metadata as metadata
import platform
import sys
import textwrap

PACKAGES = ("pymongo", "mongoeco", "mongomock", "nbval", "jupyterlab", "ipywidgets", "wiredtiger")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """The installed version of each package, or None when it is not installed."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def sandbox_line() -> str:
    """Whether ``course grade`` can sandbox learners' kernels here, and what is lost if not."""
    try:
        from course.grading.sandbox import bwrap_path, sandbox_problem
    except ModuleNotFoundError:
        return "Sandbox: the grader is not part of this hand-out (only instructors grade)"
    problem = sandbox_problem()
    if not problem:
        return f"Sandbox: ready (bubblewrap, {bwrap_path()}): course grade runs each learner's kernel in it"
    from course.setup.prereqs import PREREQUISITES

    bubblewrap = next(p for p in PREREQUISITES if p.name == "bubblewrap")
    return f"Sandbox: MISSING: {problem}. Without it {bubblewrap.lost}"


def missing_prerequisites() -> list[str]:
    """One line per missing system prerequisite: what it costs and the command that installs it."""
    import os

    from course.setup.prereqs import PREREQUISITES, install_command, platform_name

    lines = []
    for prerequisite in PREREQUISITES:
        if prerequisite.found():
            continue
        command, advice = install_command([prerequisite], platform_name(), os.geteuid() == 0)
        how = f"install with `{command}` (or make prereqs)" if command else "; ".join(advice)
        lines.append(f"Missing {prerequisite.name}: {prerequisite.lost}; {how}")
    return lines or ["Missing: nothing (every system prerequisite is installed)"]


def prerequisite_table() -> list[str]:
    """Every system prerequisite, found or missing, and what it serves."""
    from course.setup.prereqs import PREREQUISITES

    lines = ["System prerequisites (make prereqs installs the missing ones, or says how):"]
    for prerequisite in PREREQUISITES:
        lines.append(f"  {'found  ' if prerequisite.found() else 'MISSING'}  {prerequisite.name:<13} "
                     f"{prerequisite.serves}")
    return lines


def patch_line(backend_name: str | None, failure: str) -> str:
    """Whether the course's patches of the backend fit the installed release (``failure``: why not)."""
    from course.store.engine_imports import problems
    from course.store.patch_check import WRITTEN_FOR

    found = [failure] if failure else []
    found += problems()
    if found:
        return "Patches: PROBLEM: " + " | ".join(found)
    package = (backend_name or "").split("-")[0]
    if package not in WRITTEN_FOR:
        return "Patches: none (the course patches only the embedded engines)"
    series = WRITTEN_FOR[package].rsplit(".", 1)[0]
    return (f"Patches: every patch of {package} fits the installed {metadata.version(package)} (written for "
            f"{WRITTEN_FOR[package]}; pyproject.toml pins {package}=={series}.*)")


def quirk_lines(backend_name: str) -> list[str]:
    """The quirks the course absorbs for ``backend_name``, one short line each."""
    from course.store.quirks import QUIRKS

    quirks = QUIRKS.get(backend_name.split("-")[0], ())
    if not quirks:
        return []
    lines = [f"Quirks the course absorbs ({len(quirks)}; course/store/quirks.py says what it does about each):"]
    lines += ["  - " + textwrap.shorten(quirk.split(": the course")[0], width=110, placeholder="...")
              for quirk in quirks]
    return lines


def report() -> tuple[int, str]:
    """Return (exit code, text): 0 with the description, or 1 when the backend cannot be opened or the
    course's patches do not fit the installed release."""
    from course.store.backends import BackendError, open_backend
    from course.store.capabilities import ALL
    from course.store.namespace import PREFIX, current_tag
    from course.store.patch_check import PatchMismatch
    from course.setup.storage_build import describe

    lines = [f"Python: {platform.python_version()} ({sys.executable})"]
    backend, failure, patch_failure = None, "", ""
    try:
        backend = open_backend()
    except BackendError as error:
        failure = str(error)
    except PatchMismatch as error:
        failure = patch_failure = str(error)
    lines.append(f"Backend: {backend.name} ({backend.description})" if backend else
                 f"Backend: cannot be opened: {failure}")
    lines.append(sandbox_line())
    lines.append(f"WiredTiger: {describe()}")
    patches = patch_line(backend.name if backend else None, patch_failure)
    lines.append(patches)
    lines += missing_prerequisites()
    lines += ["", *prerequisite_table(), ""]
    lines += [f"{name}: {version or 'not installed'}" for name, version in package_versions().items()]
    tag = current_tag()
    lines.append(f"Course namespace: databases named {PREFIX}*" + (f" (this learner's tag: {tag})" if tag else ""))
    if backend is None:
        return 1, "\n".join(lines)
    lines += [f"Version: {backend.version}", *[f"Note: {note}" for note in backend.notes]]
    present = sorted(str(c) for c in ALL if backend.supports(c))
    lines.append("Capabilities present: " + (", ".join(present) or "none"))
    missing = backend.missing
    if missing:
        lines.append("Capabilities missing:")
        lines += [f"  - {cap}: {why}" for cap, why in sorted(missing.items(), key=lambda kv: str(kv[0]))]
    else:
        lines.append("Capabilities missing: none")
    if backend.embedded:
        lines += quirk_lines(backend.name)
    return (1 if patches.startswith("Patches: PROBLEM") else 0), "\n".join(lines)
