"""Applying the course's patches to another package: each checked first, applied once, marked as ours.

A patch replaces ``owner.name`` with ``make(original)`` only after :mod:`course.store.patch_check` has
confirmed that the original is the function ``make`` was written for; a function the course adds is
marked (:data:`PATCHED`) so that applying the quirks again changes nothing.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from course.store.patch_check import check_absent, check_replaced


PATCHED = "_course_quirk_absorbed"


Patch = tuple  #: (owner, attribute name, patch maker): ``owner.name`` becomes ``make(owner.name)``


def check_patches(package: str, patches: list[Patch], added: tuple[tuple[Any, str], ...] = ()) -> None:
    """Check every patch not yet applied, and every attribute the course adds, before anything is patched
    (so that a mismatch leaves the package as it was): raises ``PatchMismatch``."""
    for owner, name, make in patches:
        original = getattr(owner, name)
        if not getattr(original, PATCHED, False):
            check_replaced(original, make, package, attribute_name(owner, name))
    for owner, name in added:
        current = getattr(owner, name, None)
        if not getattr(getattr(current, "fget", current), PATCHED, False):
            check_absent(owner, name, package)


def apply_patch(owner: Any, name: str, make: Callable[[Callable], Callable], package: str = "mongoeco") -> None:
    """Replace ``owner.name`` with ``make(original)``, once, after checking it is what ``make`` was written for."""
    original = getattr(owner, name)
    if getattr(original, PATCHED, False):
        return
    check_replaced(original, make, package, attribute_name(owner, name))
    replacement = functools.wraps(original)(make(original))
    setattr(replacement, PATCHED, True)
    setattr(owner, name, replacement)


def attribute_name(owner: Any, name: str) -> str:
    """``Owner.name`` (a class's qualified name, or a module's last component)."""
    return f"{getattr(owner, '__qualname__', owner.__name__.rsplit('.', 1)[-1])}.{name}"


def mark_ours(function: Callable) -> Callable:
    """``function``, marked as the course's (an attribute the course adds)."""
    setattr(function, PATCHED, True)
    return function
