"""The README of a learners' hand-out (``course release --to``): the learner's, not the instructor's.

The course's README is written for whoever holds the whole repository: its ``make test`` needs ``tests/``,
its "For instructors" part describes the grader, and neither is in a hand-out.  :func:`learner_readme`
writes the hand-out's README from the parts of the course's README a learner needs, taken as they are
(the lesson table, the backends, the audit, how exercises work: one source, so the two never disagree),
between a beginning and an end written for the learner: the one command, what the hand-out holds and
leaves out, and how to hand work in.
"""

from __future__ import annotations

import re

#: the course README's sections a learner needs, by their heading, in the order they appear
KEPT = ("What the course covers", "Backends: where your data lives", "Auditing a database", "How exercises work")

_COMMANDS = """```sh
make lab     # build the environment and open the labs in JupyterLab
```

`make lab` prints a URL such as `http://127.0.0.1:8888/lab?token=...`; open it
in your browser. JupyterLab listens on `127.0.0.1` only and asks for that token.
Stop it with Ctrl-C. `make help` lists the other targets. It needs `make`, a
shell, and Python >= 3.13 (3.11 and 3.12 work with reduced checking: the
course says what it cannot check there). `make doctor` says which Python and
which database engine the labs run on.
"""

_HOLDS = """## What this folder holds

This is the learners' hand-out of the course: the labs (`labs/`, copied into
`work/` the first time you run `make lab`), the data they load (`data/`) and
the `course` package that runs the exercises and their visible checks. It
leaves out what belongs to your instructor: the solution notebooks{solutions},
the hidden checks (`check()` says how many more run when your work is graded),
the grader and the course's own test suite, so there is no `make test` here.
"""

_HAND_IN = """## Handing in

Your answers are the notebooks in `work/` (`work/01-design-for-reads.ipynb`,
...): hand them in as your instructor asks, without renaming them. Before you
do, run each one from the top (Kernel > Restart Kernel and Run All Cells): the
grader runs your notebook the same way, in a fresh kernel, then runs every
check, visible and hidden, on the answers your cells left. A notebook that
only works when its cells run out of order loses the answers that depend on
that order.
"""


def sections(readme: str) -> dict[str, str]:
    """The ``## `` sections of a README by heading, each with its heading line and its subsections."""
    found: dict[str, str] = {}
    parts = re.split(r"(?m)^(?=## )", readme)
    for part in parts[1:]:
        heading = part.splitlines()[0][3:].strip()
        found[heading] = part.rstrip() + "\n"
    return found


def _learners_view(section: str) -> str:
    """A kept section with its sentences about the course's own tests left out."""
    section = re.sub(r",? and `make test` keeps\s+testing the course's `labs/`", "", section)
    return section


def learner_readme(readme: str, *, graded: bool = False) -> str:
    """The hand-out's README made from the course's ``readme`` (``graded``: solutions withheld until grading).

    Raises ``ValueError`` when a section of :data:`KEPT` is missing (the README was reorganised: the hand-out
    would silently lose it).
    """
    title = readme.splitlines()[0] if readme.startswith("# ") else "# Schema Design in a Schemaless Store"
    intro = re.split(r"(?m)^```", readme, maxsplit=1)[0].splitlines()[1:]
    found = sections(readme)
    missing = [name for name in KEPT if name not in found]
    if missing:
        raise ValueError(f"the course README has no section {', '.join(repr(m) for m in missing)}: "
                         "course/handout/readme.py says which sections a hand-out keeps")
    solutions = (" (and each exercise's `solution()` says it is withheld until your work is graded)" if graded
                 else " (each exercise's `solution()` still shows its reference solution)")
    parts = [title, "\n".join(intro).strip() + "\n", _COMMANDS, _HOLDS.format(solutions=solutions),
             *(_learners_view(found[name]) for name in KEPT), _HAND_IN]
    return "\n".join(part.rstrip() + "\n" for part in parts)
