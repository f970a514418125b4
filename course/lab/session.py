"""A lab session: the one call in a lab's first code cell.

``lab = start_lab("01")`` opens the backend, gives the lab a fresh database
under the course namespace, prints which backend it is and what it cannot
check, and exposes the lab's exercises as ``lab.q1``, ``lab.q2``, ...
"""

from __future__ import annotations

from typing import Any

from course.store.backends import Backend, open_backend
from course.engine.exercise import Exercise
from course.lessons import lesson
from course.store.namespace import database_name, guard, lab_databases

_ACTIVE: dict[str, "Lab"] = {}


class Lab:
    """One lab's database and exercises on one backend."""

    def __init__(self, lab_id: str, backend: Backend):
        module = lesson(lab_id)
        self.id = lab_id
        self.title: str = module.TITLE
        self.backend = backend
        self.exercises: dict[str, Exercise] = {cls.id: cls(self) for cls in module.EXERCISES}

    @property
    def client(self) -> Any:
        """The backend's client (pymongo, mongoeco or mongomock)."""
        return self.backend.client

    @property
    def db(self) -> Any:
        """This lab's own database, ``course_<lab>``."""
        return self.client[guard(database_name(self.id))]

    def scratch(self) -> Any:
        """A freshly emptied scratch database for checks, ``course_<lab>_scratch``."""
        name = guard(database_name(self.id, "scratch"))
        self.client.drop_database(name)
        return self.client[name]

    def reset(self) -> None:
        """Drop this lab's databases (and only those)."""
        for name in lab_databases(self.id):
            self.client.drop_database(guard(name))

    def exercise(self, number: int) -> Exercise:
        """Return exercise ``number`` of this lab."""
        key = f"{self.id}.{number}"
        if key not in self.exercises:
            raise AttributeError(f"lab {self.id} has exercises {', '.join(self.exercises)}; no {key}")
        return self.exercises[key]

    def __getattr__(self, name: str) -> Exercise:
        if name.startswith("q") and name[1:].isdigit():
            return self.exercise(int(name[1:]))
        raise AttributeError(name)

    def describe(self) -> str:
        """A few lines: the lab, the backend, its database, and what it cannot check."""
        lines = [
            f"Lab {self.id}: {self.title}",
            f"Backend: {self.backend.description}",
            f"Database: {self.db.name}",
        ]
        lines += [f"Note: {note}" for note in self.backend.notes]
        if self.backend.missing:
            lines.append(f"Cannot check here: {', '.join(self.backend.missing)} (print(lab.limits()) says why; "
                         "a check that needs one says so)")
        else:
            lines.append("Every exercise can be checked on this backend.")
        return "\n".join(lines)

    def limits(self) -> str:
        """What this backend cannot check, one capability per line, and why (the details of :meth:`describe`)."""
        if not self.backend.missing:
            return f"{self.backend.name} can check every exercise."
        return "\n".join([f"Cannot check on {self.backend.name}:",
                          *(f"  - {cap}: {why}" for cap, why in self.backend.missing.items())])

    def __repr__(self) -> str:
        return f"<Lab {self.id} on {self.backend.name}, database {self.db.name}>"


def start_lab(lab_id: str, *, reset: bool = True, show: bool = True) -> Lab:
    """Open the backend, give lab ``lab_id`` a fresh database, and print what it runs on."""
    lab = Lab(lab_id, open_backend())
    if reset:
        lab.reset()
    _ACTIVE[lab_id] = lab
    if show:
        print(lab.describe())
    return lab


def active_lab(lab_id: str) -> Lab | None:
    """The lab started in this process by :func:`start_lab`, if any."""
    return _ACTIVE.get(lab_id)
