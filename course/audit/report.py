"""What an audit found: findings, what it examined, what it could not, and the JSON shape.

``Report.to_json()`` gives exactly the shape ``course audit --json`` prints::

    {"database": "shop",
     "sampled": {"limit": 1000,
                 "collections": {"customers": {"examined": 300, "documents": 300, "method": "all"}},
                 "not_examined": [{"kind": "unused_index", "collection": null, "reason": "..."}]},
     "findings": [{"kind": "unbounded_array", "collection": "customers", "field": "orders",
                   "severity": "high", "evidence": {...},
                   "fix": {"why": "...", "how": "...", "see": [{"lesson": "04", "section": "..."}]}}]}

``fix.why`` says what the problem costs, ``fix.how`` what repairs it, and
``fix.see`` the lesson sections that teach the repair.  Evidence values are
plain JSON data (``_id`` values that are not JSON, such as an ObjectId, are
given as strings).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from course.audit.json_data import plain

#: The kinds of finding, in the order reports list them.
KINDS = ("unbounded_array", "bloated_document", "mixed_types", "missing_version", "version_mix",
         "redundant_index", "unused_index", "too_many_collections", "mixed_kinds", "missing_validator",
         "copy_drift")
SEVERITIES = ("high", "medium", "low")

#: Lesson titles as their notebooks' first headings give them ("04 · Schema design patterns").
LESSON_TITLES = {"01": "Design for reads", "02": "Embed or reference", "03": "Validation and versioning",
                 "04": "Schema design patterns", "05": "Changing a schema while the system runs",
                 "06": "Anti-patterns and the audit"}


@dataclass(frozen=True)
class LessonRef:
    """A section of a lesson that teaches a repair: the lab number and a heading of its notebook."""

    lesson: str
    section: str

    def __str__(self) -> str:
        return f"{self.lesson} · {LESSON_TITLES.get(self.lesson, '?')} › {self.section}"

    def to_json(self) -> dict:
        """``{"lesson": "04", "section": "..."}``."""
        return {"lesson": self.lesson, "section": self.section}


#: The lesson map for lesson 06: the kinds one of its exercises repairs, and the heading of that exercise.
#: Every finding of such a kind cites it after the sections its own module gives.
REPAIRED_IN_06 = {
    "redundant_index": LessonRef("06", "Exercise 06.1: drop the redundant index"),
    "mixed_types": LessonRef("06", "Exercise 06.2: the counter that turned long"),
    "mixed_kinds": LessonRef("06", "Exercise 06.3: add the discriminator"),
    "too_many_collections": LessonRef("06", "Exercise 06.4: merge the tenants"),
    "copy_drift": LessonRef("06", "Exercise 06.5: refresh the copies"),
    "unbounded_array": LessonRef("06", "Exercise 06.6: move the order history out"),
}


@dataclass(frozen=True)
class Finding:
    """One problem: its kind, where it is, how bad, the measurements that show it, and its fix."""

    kind: str
    collection: str | None
    field: str | None
    severity: str
    evidence: dict
    summary: str  #: one line for people, built from the evidence
    why: str  #: what it costs
    how: str  #: what repairs it
    see: tuple[LessonRef, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown finding kind {self.kind!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"unknown severity {self.severity!r}")
        repair = REPAIRED_IN_06.get(self.kind)
        if repair is not None and repair not in self.see:
            object.__setattr__(self, "see", tuple(self.see) + (repair,))

    @property
    def where(self) -> str:
        """``collection.field``, or whichever of the two there is, or "(database)"."""
        if self.collection and self.field:
            return f"{self.collection}.{self.field}"
        return self.collection or self.field or "(database)"

    def to_json(self) -> dict:
        """The finding in the JSON shape of ``course audit --json``."""
        return {"kind": self.kind, "collection": self.collection, "field": self.field,
                "severity": self.severity, "evidence": plain(self.evidence),
                "fix": {"why": self.why, "how": self.how, "see": [ref.to_json() for ref in self.see]}}


@dataclass(frozen=True)
class Examined:
    """How much of one collection the audit read."""

    collection: str
    examined: int  #: documents read
    documents: int  #: documents in the collection
    method: str  #: "all", "$sample" or "seeded pick"

    def to_json(self) -> dict:
        """``{"examined": ..., "documents": ..., "method": ...}``."""
        return {"examined": self.examined, "documents": self.documents, "method": self.method}


@dataclass(frozen=True)
class NotExamined:
    """A kind the audit could not decide, for one collection or the whole database, and why."""

    kind: str
    collection: str | None
    reason: str

    def to_json(self) -> dict:
        """``{"kind": ..., "collection": ..., "reason": ...}``."""
        return {"kind": self.kind, "collection": self.collection, "reason": self.reason}


_SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}


def severity_order(finding: Finding) -> tuple:
    """A sort key putting the most severe findings first, then in :data:`KINDS` order."""
    return (_SEVERITY_ORDER[finding.severity], KINDS.index(finding.kind), finding.collection or "")


@dataclass
class Report:
    """The result of :func:`course.audit.audit`: render it (HTML in a notebook, text with ``print``)."""

    database: str
    backend: str
    limit: int  #: the most documents read per collection
    examined: list[Examined] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    not_examined: list[NotExamined] = field(default_factory=list)

    def kinds(self) -> set[str]:
        """The kinds found at least once."""
        return {finding.kind for finding in self.findings}

    def of_kind(self, kind: str, collection: str | None = None) -> list[Finding]:
        """The findings of ``kind`` (in ``collection`` when given)."""
        if kind not in KINDS:
            raise ValueError(f"unknown finding kind {kind!r}; the kinds are {', '.join(KINDS)}")
        return [f for f in self.findings if f.kind == kind and (collection is None or f.collection == collection)]

    def cannot_know(self, kind: str, collection: str | None = None) -> list[NotExamined]:
        """What could not be examined for ``kind`` (database-wide entries count for every collection)."""
        return [n for n in self.not_examined
                if n.kind == kind and (collection is None or n.collection in (None, collection))]

    def to_json(self) -> dict:
        """The report as ``course audit --json`` prints it."""
        return {"database": self.database,
                "sampled": {"limit": self.limit,
                            "collections": {e.collection: e.to_json() for e in self.examined},
                            "not_examined": [n.to_json() for n in self.not_examined]},
                "findings": [f.to_json() for f in self.findings]}

    def json(self, indent: int | None = 2) -> str:
        """:meth:`to_json` as a JSON string."""
        return json.dumps(self.to_json(), indent=indent, ensure_ascii=False)

    def by_severity(self) -> list[Finding]:
        """The findings, most severe first, then in :data:`KINDS` order (how both renderings list them)."""
        return sorted(self.findings, key=severity_order)

    def __str__(self) -> str:
        from course.audit.text_report import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from course.audit.html_report import render_html

        return render_html(self)

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython's plain-text view
        printer.text(str(self))
