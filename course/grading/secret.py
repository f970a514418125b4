"""Secret tests: hidden assertions kept outside the repository (``course grade --tests DIR``).

A secret test file is a Python file in DIR (``*.py``, not starting with ``_``)
that defines functions decorated with :func:`hidden_for`::

    from course.engine.exercise import Incorrect
    from course.grading.secret import hidden_for

    @hidden_for("01.2", points=2)
    def keeps_prices_in_pence(exercise, answers):
        \"\"\"prices are whole pence\"\"\"
        if answers.price_pence(1.5) != 150:
            raise Incorrect("price_pence(1.5) should be 150")

Each function receives the exercise (``exercise.lab.db``, ``exercise.call``,
``exercise.expect_type`` ...) and the learner's answers by name, exactly like
the package's ``@hidden`` assertions, and runs in the grader (never in the
learner's kernel, which never sees the file) once the notebook's last cell has
run, with the hidden assertions: a learner function it calls runs in the
kernel, through the agent, on the data the test hands it.  It passes by
returning and fails by raising :class:`~course.engine.exercise.Incorrect`.  Its first
docstring line is its description; feedback, gradebook and summary show that
description and a fixed sentence (:mod:`course.engine.hidden_messages`), never its
code, its failure message (which may quote what the learner's code returned)
or what the learner's code raised beyond the nearest builtin or pymongo class.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from course.store.capabilities import Capability

_EXERCISE = re.compile(r"^\d{2}\.\d+$")
SECRET_ATTRIBUTE = "_course_secret_for"


class SecretTestError(ValueError):
    """A secret test file cannot be used; the message names the file and why."""


def hidden_for(exercise_id: str, points: float = 1, requires: Iterable[Capability] = ()) -> Callable:
    """Declare a secret hidden assertion for exercise ``exercise_id`` (e.g. ``"01.2"``)."""
    if not isinstance(exercise_id, str) or not _EXERCISE.match(exercise_id):
        raise SecretTestError(f"hidden_for needs an exercise id such as '01.2', got {exercise_id!r}")
    if not isinstance(points, (int, float)) or points <= 0:
        raise SecretTestError(f"hidden_for({exercise_id!r}): points must be a positive number")

    def decorate(function: Callable) -> Callable:
        from course.engine.exercise import hidden

        def assertion(exercise: Any, answers: Any) -> None:
            function(exercise, answers)

        assertion.__doc__ = (function.__doc__ or function.__name__).strip().splitlines()[0]
        assertion.__name__ = function.__name__
        hidden(points, requires)(assertion)
        setattr(function, SECRET_ATTRIBUTE, (exercise_id, assertion))
        return function

    return decorate


def secret_assertions(modules: Iterable[Any], exercise_id: str) -> list[Callable]:
    """The assertion functions that ``modules`` declare for ``exercise_id``, in file then definition order."""
    found = []
    for module in modules:
        for value in vars(module).values():
            target = getattr(value, SECRET_ATTRIBUTE, None)
            if target and target[0] == exercise_id:
                found.append(target[1])
    return found


@dataclass(frozen=True)
class SecretTests:
    """The secret test files of a run: module name -> file, and the points per exercise."""

    files: dict[str, Path]
    points: dict[str, float]  #: exercise id -> extra points at stake
    descriptions: dict[str, list[str]]
    digest: str  #: SHA-256 over every file, for the resume key

    @classmethod
    def none(cls) -> "SecretTests":
        return cls({}, {}, {}, "")


def secret_files(directory: Path) -> list[Path]:
    """The secret test files in ``directory``, sorted."""
    return sorted(p for p in Path(directory).glob("*.py") if p.is_file() and not p.name.startswith("_"))


def load_secret_tests(directory: Path | None) -> SecretTests:
    """Import the secret tests in ``directory`` (in this process) to check them and count their points."""
    if directory is None:
        return SecretTests.none()
    directory = Path(directory)
    if not directory.is_dir():
        raise SecretTestError(f"{directory}: not a folder of secret tests")
    files, points, descriptions = {}, {}, {}
    digest = hashlib.sha256()
    for number, path in enumerate(secret_files(directory)):
        name = f"_course_secret_{number}_{re.sub(r'[^A-Za-z0-9_]', '_', path.stem)}"
        data = path.read_bytes()
        digest.update(path.name.encode() + b"\0" + data + b"\0")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            raise SecretTestError(f"{path}: cannot be imported ({type(error).__name__}: {error})") from error
        finally:
            sys.modules.pop(name, None)
        declared = [v for v in vars(module).values() if getattr(v, SECRET_ATTRIBUTE, None)]
        if not declared:
            raise SecretTestError(f"{path}: defines no function decorated with @hidden_for")
        for value in declared:
            exercise_id, assertion = getattr(value, SECRET_ATTRIBUTE)
            points[exercise_id] = points.get(exercise_id, 0.0) + assertion._course_assertion.points
            descriptions.setdefault(exercise_id, []).append(assertion._course_assertion.name)
        files[name] = path.resolve()
    if not files:
        raise SecretTestError(f"{directory}: no secret test files (*.py)")
    return SecretTests(files, points, descriptions, digest.hexdigest())
