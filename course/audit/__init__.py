"""``course audit``: find schema anti-patterns in a database, read-only, with evidence and a fix.

In a notebook::

    import course.audit
    course.audit(db)            # the report, rendered as HTML
    report = course.audit.audit(db, sample=500)
    report.of_kind("unbounded_array")
    report.to_json()            # what ``course audit --json`` prints

The module itself is callable (``course.audit(db)`` is ``course.audit.audit(db)``),
so the call reads like the command.  Each kind of finding is a module of this
package (:data:`course.audit.report.KINDS`); :mod:`course.audit.sampler` reads
the database, through a view that cannot write.  Importing the package is
cheap: the audit's modules (and pymongo) load on first use, so the ``course``
command's parser can import :mod:`course.audit.command` for nothing.
"""

from __future__ import annotations

import importlib
import sys
import types

__all__ = ["audit", "Report", "Finding", "NotExamined", "LessonRef", "KINDS", "DEFAULT_SAMPLE"]
_LAZY = {"Report": "course.audit.report", "Finding": "course.audit.report", "NotExamined": "course.audit.report",
         "LessonRef": "course.audit.report", "KINDS": "course.audit.report", "DEFAULT_SAMPLE": "course.audit.sampler"}


def audit(db, **options):
    """Audit ``db`` read-only and return the report; see :func:`course.audit.run.audit` for the options."""
    from course.audit.run import audit as run_audit

    return run_audit(db, **options)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _CallableModule(types.ModuleType):
    """This package, callable: ``course.audit(db, ...)`` runs :func:`audit`."""

    def __call__(self, db, **options):
        return audit(db, **options)


sys.modules[__name__].__class__ = _CallableModule
