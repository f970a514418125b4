"""What a check, a hint or a solution shows: plain text for terminals and nbval, HTML for Jupyter."""

from __future__ import annotations

import html
import re
from dataclasses import asdict, dataclass, field
from enum import Enum


class Status(str, Enum):
    """The verdict on one exercise."""

    CORRECT = "correct"
    INCORRECT = "incorrect"
    NOT_ATTEMPTED = "not_attempted"
    ERROR = "error"
    UNSUPPORTED = "unsupported"
    #: every assertion that ran passed, but some requirement could not be checked on this backend
    PARTLY_CHECKED = "partly_checked"


_LOOK = {  # status -> (label, icon, colour); mid-tone colours legible on light and dark themes
    Status.CORRECT: ("Correct", "✔", "#1f883d"),
    Status.INCORRECT: ("Incorrect", "✘", "#cf222e"),
    Status.NOT_ATTEMPTED: ("Not attempted", "…", "#6e7781"),
    Status.ERROR: ("Error", "⚠", "#bc4c00"),
    Status.UNSUPPORTED: ("Cannot check here", "⊘", "#8250df"),
    Status.PARTLY_CHECKED: ("Partly checked", "◐", "#8250df"),
}
_HINT_COLOUR = "#9a6700"
_SOLUTION_COLOUR = "#0969da"


_OPERATOR = re.compile(r"\$[A-Za-z_][A-Za-z0-9_.]*")


def prose_html(text: str) -> str:
    """``text`` as HTML with every ``$operator`` (``$lte``, ``$push``, ``$each``...) shown as code.

    Escaped, and inside a box that MathJax skips (see :func:`_box`), so JupyterLab never typesets
    the text between two dollar signs as mathematics.
    """
    escaped = html.escape(text)
    parts, start = [], 0
    for begin, end in _literals(escaped):
        parts.append(_OPERATOR.sub(lambda m: f'<code class="course-operator">{m.group(0)}</code>',
                                   escaped[start:begin]))
        parts.append(f'<code class="course-operator">{escaped[begin:end]}</code>')
        start = end
    parts.append(_OPERATOR.sub(lambda m: f'<code class="course-operator">{m.group(0)}</code>', escaped[start:]))
    return "".join(parts)


def _literals(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each outermost balanced ``{...}`` in ``text`` holding a ``$``: an update or a stage
    written out (``{'$set': {'a': 1}}``) is shown as one piece of code, not cut around its operators."""
    spans, depth, begin = [], 0, 0
    for index, char in enumerate(text):
        if char == "{":
            if depth == 0:
                begin = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0 and "$" in text[begin:index]:
                spans.append((begin, index + 1))
    return spans


def _box(kind: str, colour: str, badge: str, exercise_id: str, body_html: str, status: str = "") -> str:
    """One result box: a coloured badge (white on the status colour, legible on any theme),
    the exercise id, then the body in the theme's own text colour."""
    data_status = f' data-status="{status}"' if status else ""
    return (
        f'<div class="course-result course-{kind} tex2jax_ignore mathjax_ignore"{data_status} data-exercise="{html.escape(exercise_id)}" '
        f'style="border-left:4px solid {colour};border-radius:3px;padding:0.45em 0.8em;margin:0.3em 0;'
        f'background:{colour}14;line-height:1.5">'
        f'<span class="course-badge" style="display:inline-block;background:{colour};color:#fff;'
        f'font-weight:600;border-radius:3px;padding:0 0.5em;margin-right:0.5em;white-space:nowrap">'
        f"{badge}</span>"
        f'<strong class="course-exercise" style="margin-right:0.4em">{html.escape(exercise_id)}</strong>'
        f"{body_html}</div>"
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
    requirement: str = ""  #: the key of the requirement this assertion checks


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
    #: hidden assertions that did not run (``check()`` runs the visible ones only)
    pending: int = 0
    #: requirements this backend could not check, as "what the statement demands (needs X)"
    unchecked: tuple[str, ...] = field(default=())

    @property
    def label(self) -> str:
        """The status as a learner reads it ("Correct", "Incorrect", ...)."""
        if self.status is Status.CORRECT and self.pending:
            return "Visible checks passed"
        return _LOOK[self.status][0]

    @property
    def checked_summary(self) -> str:
        """What was checked: "4 of 4 visible checks passed; 3 more run when your work is graded" in ``check()``,
        "7 of 7 checks, hidden ones included, passed" once graded."""
        ran = [o for o in self.outcomes if o.status is not Status.UNSUPPORTED]
        if not ran:
            return ""
        passed = sum(1 for o in ran if o.status is Status.CORRECT)
        kind = "visible checks" if self.pending or not any(o.hidden for o in ran) else "checks, hidden ones included,"
        text = f"{passed} of {len(ran)} {kind} passed"
        if self.pending:
            more = "1 more runs" if self.pending == 1 else f"{self.pending} more run"
            text += f"; {more} when your work is graded (the same rules on other data)"
        return text

    def lines(self) -> list[str]:
        """The message, what was checked, and what could not be checked here, one per line."""
        lines = [self.message] if self.message else []
        if self.status not in (Status.NOT_ATTEMPTED, Status.UNSUPPORTED) and self.checked_summary:
            lines.append(self.checked_summary)
        lines += [f"not checked on this backend: {item}" for item in self.unchecked
                  if f"not checked on this backend: {item}" not in self.message]  # a partly checked one says them
        return lines

    def __str__(self) -> str:
        text = f"[{self.exercise_id}] {self.label}"
        lines = self.lines()
        if not lines:
            return text
        return f"{text}: " + "\n  ".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        label, icon, colour = _LOOK[self.status]
        label = self.label
        lines = self.lines()
        body = ""
        if lines:
            body = f'<span class="course-message">{prose_html(lines[0])}</span>'
            body += "".join(f'<div class="course-detail">{prose_html(line)}</div>' for line in lines[1:])
        return _box("check", colour, f"{icon} {label}", self.exercise_id, body, self.status.value)

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
        unchecked = tuple(data.get("unchecked", ()))
        return cls(**{**data, "status": Status(data["status"]), "outcomes": outcomes, "unchecked": unchecked})


@dataclass(frozen=True)
class Hint:
    """One hint of an exercise."""

    exercise_id: str
    number: int
    total: int
    text: str

    @property
    def heading(self) -> str:
        """"Hint 2 of 3", or "Hint 3 of 3 (the last one)" once there is no next one."""
        last = " (the last one)" if self.total and self.number == self.total else ""
        return f"Hint {self.number} of {self.total}{last}"

    def __str__(self) -> str:
        return f"[{self.exercise_id}] {self.heading}: {self.text}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        badge = f"💡 {self.heading}"
        body = f'<span class="course-message">{prose_html(self.text)}</span>'
        return _box("hint", _HINT_COLOUR, badge, self.exercise_id, body)


@dataclass(frozen=True)
class Solution:
    """The reference answer of an exercise, as code."""

    exercise_id: str
    code: str

    def __str__(self) -> str:
        return f"[{self.exercise_id}] Solution:\n{self.code}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        code = (f'<pre class="course-code" style="margin:0.4em 0 0;padding:0.4em 0.6em;'
                f'background:rgba(127,127,127,0.12);border-radius:3px;overflow-x:auto">'
                f"{html.escape(self.code)}</pre>")
        return _box("solution", _SOLUTION_COLOUR, "📖 Solution", self.exercise_id, code)
