"""What a result depends on besides the notebook: a hash of the code that grades a lab.

Part of the resume key (:func:`course.grading.store.grading_key`): change a
check, the grader or the engine and the next run grades again.  Other labs'
lesson modules are left out, so editing lesson 04 does not regrade lab 01.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import course

PACKAGE_ROOT = Path(course.__file__).resolve().parent
_LESSON = re.compile(r"^lesson\d{2}(_.*)?\.py$")


def code_digest(lab: str | None) -> str:
    """SHA-256 over the course package's files that grade ``lab`` (every lab when None)."""
    import course.lessons

    own = course.lessons.MODULES.get(lab or "", "")
    files = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        if lab and path.parent.name == "lessons" and _LESSON.match(path.name) \
                and not path.stem.startswith(f"lesson{lab}"):
            continue
        files.append(path)
    module = sys.modules.get(f"course.lessons.{own}") if own else None
    outside = getattr(module, "__file__", None)
    if outside and Path(outside).resolve() not in files:  # a lesson registered from elsewhere (tests)
        files.append(Path(outside).resolve())
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(PACKAGE_ROOT) if path.is_relative_to(PACKAGE_ROOT) else path.name)
                      .encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
