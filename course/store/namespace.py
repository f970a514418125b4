"""The course's own database namespace.

The course only ever creates, changes and drops databases whose names start
with ``course_``.  Each lab owns ``course_<lab>`` and, for checks that need
scratch space, ``course_<lab>_scratch``.  The grader adds a per-learner tag so
that learners graded on one real server never share a database.
"""

from __future__ import annotations

import os
import re

PREFIX = "course_"
TAG_VARIABLE = "COURSE_DB_TAG"
_LAB_ID = re.compile(r"^\d{2}$")
_TAG = re.compile(r"^[a-z0-9_]{1,40}$")
#: What a lab may use a database for: "" is the learner's, "scratch" the checks', "demo" `course audit --demo`'s shop.
PURPOSES = ("", "scratch", "demo")


class NamespaceError(ValueError):
    """A database name outside the course's namespace was about to be used."""


def check_lab_id(lab: str) -> str:
    """Return ``lab`` if it looks like a lab id ("00".."99"), else raise ValueError."""
    if not isinstance(lab, str) or not _LAB_ID.match(lab):
        raise ValueError(f"lab id must be two digits such as '01', got {lab!r}")
    return lab


def current_tag() -> str:
    """Return the per-learner tag from ``COURSE_DB_TAG`` ('' when unset)."""
    tag = os.environ.get(TAG_VARIABLE, "")
    if tag and not _TAG.match(tag):
        raise NamespaceError(
            f"{TAG_VARIABLE}={tag!r} is not a valid tag: use 1-40 of a-z, 0-9 and _"
        )
    return tag


def database_name(lab: str, purpose: str = "") -> str:
    """Return the database name a lab uses for ``purpose`` ('' for the main one)."""
    check_lab_id(lab)
    if purpose not in PURPOSES:
        raise ValueError(f"unknown database purpose {purpose!r}; expected one of {PURPOSES}")
    parts = [PREFIX + lab]
    if purpose:
        parts.append(purpose)
    tag = current_tag()
    if tag:
        parts.append("g" + tag)
    return "_".join(parts)


def is_course_database(name: str) -> bool:
    """True when ``name`` belongs to the course's namespace."""
    return isinstance(name, str) and name.startswith(PREFIX)


def lab_databases(lab: str) -> tuple[str, ...]:
    """Return every database name ``lab`` may use under the current tag."""
    return tuple(database_name(lab, purpose) for purpose in PURPOSES)


def guard(name: str) -> str:
    """Return ``name`` if it is a course database, else raise NamespaceError."""
    if not is_course_database(name):
        raise NamespaceError(
            f"refusing to touch database {name!r}: the course only uses databases "
            f"whose names start with {PREFIX!r}"
        )
    return name
