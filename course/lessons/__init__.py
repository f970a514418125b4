"""The course's lessons: one module per lab, each declaring its exercises.

A lesson is a module named ``lessonNN`` (NN the lab id).  It defines ``TITLE``, ``SLUG`` (the notebook name without its
number) and ``EXERCISES``, a tuple of :class:`course.engine.exercise.Exercise`
subclasses whose ids start with the lab id.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

from course.store.namespace import check_lab_id


def _discover() -> dict[str, str]:
    """Map each lab id to its module: every ``lessonNN`` module in this package."""
    found = {}
    for module in pkgutil.iter_modules(__path__):
        match = re.fullmatch(r"lesson(\d{2})", module.name)
        if match:
            found[match.group(1)] = module.name
    return dict(sorted(found.items()))


#: lab id -> module name under course.lessons (found from the files, nothing to register)
MODULES = _discover()


def lesson(lab: str) -> ModuleType:
    """Return the module that declares lab ``lab``'s exercises."""
    check_lab_id(lab)
    if lab not in MODULES:
        raise ValueError(f"there is no lab {lab!r}; labs are {', '.join(sorted(MODULES))}")
    return importlib.import_module(f"course.lessons.{MODULES[lab]}")


def notebook_name(lab: str) -> str:
    """Return the file name of lab ``lab``'s notebook, e.g. ``01-design-for-reads.ipynb``."""
    return f"{lab}-{lesson(lab).SLUG}.ipynb"


def lab_of_notebook(filename: str) -> str | None:
    """Return the lab id a notebook file name belongs to, or None."""
    for lab in MODULES:
        if filename == notebook_name(lab):
            return lab
    return None
