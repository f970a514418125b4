"""The audit itself: read the database once, then ask every finding module about it."""

from __future__ import annotations

from typing import Any, Iterable

from course.audit import (bloated_document, copy_drift, missing_validator, missing_version, mixed_kinds,
                          mixed_types, redundant_index, too_many_collections, unbounded_array, unused_index,
                          version_mix)
from course.audit.report import KINDS, Examined, Finding, NotExamined, Report
from course.audit.sampler import DEFAULT_SAMPLE, snapshot

#: kind -> the module that finds it (each has ``examine(snapshot)``).
MODULES = {module.KIND: module for module in (
    unbounded_array, bloated_document, mixed_types, missing_version, version_mix, redundant_index,
    unused_index, too_many_collections, mixed_kinds, missing_validator, copy_drift)}


def _backend_name(backend: Any) -> str | None:
    if backend is None or isinstance(backend, str):
        return backend
    return backend.name


def audit(db: Any, *, sample: int = DEFAULT_SAMPLE, backend: Any = None, kinds: Iterable[str] | None = None,
          collections: Iterable[str] | None = None) -> Report:
    """Audit ``db`` (read-only) and return the :class:`~course.audit.report.Report`.

    ``sample``: the most documents read per collection (larger collections are
    sampled).  ``backend``: the lab's backend (``lab.backend``) or its name;
    found from ``db`` when left out.  ``kinds`` and ``collections`` restrict the
    audit to some kinds and some collections (``too_many_collections`` then
    only sees those collections).
    """
    wanted = list(KINDS if kinds is None else kinds)
    unknown = [k for k in wanted if k not in MODULES]
    if unknown:
        raise ValueError(f"unknown kind {', '.join(map(repr, unknown))}; the kinds are {', '.join(KINDS)}")
    snap, views = snapshot(db, limit=sample, backend=_backend_name(backend), collections=collections)
    report = Report(database=snap.name, backend=snap.backend, limit=sample,
                    examined=[Examined(c.name, len(c.sample), c.documents, c.method)
                              for c in snap.collections.values()])
    for view in views:
        report.not_examined.append(NotExamined("*", view, "a view: audit the collections it reads instead"))
    for kind in KINDS:
        if kind not in wanted:
            continue
        for result in MODULES[kind].examine(snap):
            (report.findings if isinstance(result, Finding) else report.not_examined).append(result)
    report.findings.sort(key=lambda f: (KINDS.index(f.kind), f.collection or "", f.field or ""))
    return report
