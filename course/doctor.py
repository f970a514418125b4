"""``course doctor``: what this environment runs the course on."""

from __future__ import annotations

import importlib.metadata as metadata
import platform
import sys

PACKAGES = ("pymongo", "mongoeco", "mongomock", "nbval", "jupyterlab", "ipywidgets")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    """The installed version of each package, or None when it is not installed."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def report() -> tuple[int, str]:
    """Return (exit code, text): 0 with a description of the backend, or 1 with why it cannot open."""
    from course.backends import BackendError, open_backend
    from course.capabilities import ALL
    from course.namespace import PREFIX, current_tag

    lines = [f"Python: {platform.python_version()} ({sys.executable})"]
    for name, version in package_versions().items():
        lines.append(f"{name}: {version or 'not installed'}")
    tag = current_tag()
    lines.append(f"Course namespace: databases named {PREFIX}*"
                 + (f" (this learner's tag: {tag})" if tag else ""))
    try:
        backend = open_backend()
    except BackendError as error:
        lines.append(f"Backend: cannot be opened: {error}")
        return 1, "\n".join(lines)
    lines += [
        f"Backend: {backend.name}",
        f"Description: {backend.description}",
        f"Version: {backend.version}",
    ]
    lines += [f"Note: {note}" for note in backend.notes]
    present = sorted(str(c) for c in ALL if backend.supports(c))
    lines.append("Capabilities present: " + (", ".join(present) or "none"))
    missing = backend.missing
    if missing:
        lines.append("Capabilities missing:")
        lines += [f"  - {cap}: {why}" for cap, why in sorted(missing.items(), key=lambda kv: str(kv[0]))]
    else:
        lines.append("Capabilities missing: none")
    from course.quirks import QUIRKS

    quirks = QUIRKS.get(backend.name.split("-")[0], ()) if backend.embedded else ()
    if quirks:
        lines.append("Quirks the course absorbs:")
        lines += [f"  - {quirk}" for quirk in quirks]
    return 0, "\n".join(lines)
