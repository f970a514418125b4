"""What a check, a hint or a solution shows: plain text for terminals and nbval, HTML for Jupyter."""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field
from enum import Enum


class Status(str, Enum):
    """The verdict on one exercise."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    NOT_ATTEMPTED = "not_attempted"
    ERROR = "error"
    UNSUPPORTED = "unsupported"


_LOOK = {  # status -> (label, icon, colour)
    Status.CORRECT: ("Correct", "✔", "#1a7f37"),
    Status.INCORRECT: ("Incorrect", "✘", "#cf222e"),
    Status.NOT_ATTEMPTED: ("Not attempted", "…", "#6e7781"),
    Status.ERROR: ("Error", "⚠", "#bc4c00"),
    Status.UNSUPPORTED: ("Cannot check here", "⊘", "#8250df"),
}


def _box(colour: str, title: str, body_html: str) -> str:
    return (
        f'<div class="course-result" style="border-left:4px solid {colour};'
        f'padding:0.4em 0.8em;margin:0.3em 0;background:rgba(127,127,127,0.06)">'
        f'<strong style="color:{colour}">{title}</strong>{body_html}</div>'
    )


@dataclass(frozen=True)
class Outcome:
    """How one assertion of an exercise went; carries a message, never test code."""

    name: str
    status: Status
    points: float
    max_points: float
    message: str = ""
    hidden: bool = False


@dataclass(frozen=True)
class Result:
    """The verdict on one exercise, with its score and per-assertion outcomes."""

    exercise_id: str
    title: str
    status: Status
    message: str
    score: float
    max_score: float
    outcomes: tuple[Outcome, ...] = field(default=())

    @property
    def label(self) -> str:
        """The status as a learner reads it ("Correct", "Incorrect", ...)."""
        return _LOOK[self.status][0]

    def __str__(self) -> str:
        text = f"[{self.exercise_id}] {self.label}"
        return f"{text}: {self.message}" if self.message else text

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        label, icon, colour = _LOOK[self.status]
        body = f" {html.escape(self.message)}" if self.message else ""
        return _box(colour, f"{icon} {html.escape(self.exercise_id)} {label}:", body)

    def to_dict(self) -> dict:
        """A JSON-ready dict (statuses as strings)."""
        data = asdict(self)
        data["status"] = self.status.value
        for outcome in data["outcomes"]:
            outcome["status"] = outcome["status"].value
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Result":
        """Rebuild a Result from :meth:`to_dict` output."""
        outcomes = tuple(
            Outcome(**{**o, "status": Status(o["status"])}) for o in data.get("outcomes", ())
        )
        return cls(**{**data, "status": Status(data["status"]), "outcomes": outcomes})


@dataclass(frozen=True)
class Hint:
    """One hint of an exercise."""

    exercise_id: str
    number: int
    total: int
    text: str

    def __str__(self) -> str:
        return f"[{self.exercise_id}] Hint {self.number} of {self.total}: {self.text}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        title = f"💡 {html.escape(self.exercise_id)} Hint {self.number} of {self.total}:"
        return _box("#9a6700", title, f" {html.escape(self.text)}")


@dataclass(frozen=True)
class Solution:
    """The reference answer of an exercise, as code."""

    exercise_id: str
    code: str

    def __str__(self) -> str:
        return f"[{self.exercise_id}] Solution:\n{self.code}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        title = f"📖 {html.escape(self.exercise_id)} Solution:"
        return _box("#0969da", title, f"<pre>{html.escape(self.code)}</pre>")
