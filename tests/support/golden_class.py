"""A golden class for ``course grade``: sample submissions of fake lab 99 with their expected grades.

:func:`write_class` writes one folder per learner (plus secret tests) and
:data:`EXPECTED` says what the gradebook must hold for each; :data:`FEEDBACK`
lists phrases each learner's feedback must contain.  Graded with
``--lab 99 --tests <secret> --memory-mb 1024 --timeout 10`` on mongomock (lab 99 needs no database).
"""

from __future__ import annotations

import json
from pathlib import Path

from course.engine.hidden_messages import INCORRECT as WITHHELD
from support import fake_lesson
from support.fake_lesson import code

NAME = "99-fake-lab.ipynb"
ROOT = Path(__file__).resolve().parents[2]
SENTINEL = "SECRET_SENTINEL_7731"  # appears only in the secret tests' code

SECRET_TESTS = f'''
from course.engine.exercise import Incorrect
from course.grading.secret import hidden_for

{SENTINEL} = 41


@hidden_for("99.1", points=2)
def not_the_usual_mistake(exercise, answers):
    """total is not the off-by-one answer"""
    if answers.total == {SENTINEL}:
        raise Incorrect("total is one short: count again")


@hidden_for("99.2", points=1)
def doubles_big_numbers(exercise, answers):
    """double works on big numbers"""
    if exercise.call("double", answers.double, 10 ** 6) != 2 * 10 ** 6:
        raise Incorrect("double(10**6) should be 2000000")
'''

RESULT = "application/vnd.course.result+json"
ATTACKS = {
    "cheat_evaluate": (
        "from course.engine.exercise import Exercise\nfrom course.engine.results import Result, Status\n"
        "Exercise.evaluate = lambda self, ns, include_hidden=False: Result(\n"
        "    self.id, self.title, Status.CORRECT, '', self.max_points(), self.max_points())"),
    "cheat_code": (
        "from course.engine.exercise import Exercise\nfrom course.engine.results import Result, Status\n"
        "def fake(self, ns, *, include_hidden):\n"
        "    return Result(self.id, self.title, Status.CORRECT, '', 9.0, 9.0)\n"
        "Exercise.evaluate.__code__ = fake.__code__"),
    "cheat_record": (
        "import course.grading.kernel as k\nfrom IPython.display import display\n"
        f"k.record = lambda i: display({{{RESULT!r}: {{'exercise_id': i, 'title': '', 'status': 'correct',"
        " 'message': '', 'score': 9, 'max_score': 9}}, raw=True)\n"
        "k.grade_in_kernel = lambda *a: {'nonce': 'guess', 'result': {}}"),
    "cheat_lab": (
        "class Yes:\n    def __getattr__(self, name): return self\n"
        "    def __call__(self, *a, **k): return 'Correct'\nlab = Yes()"),
    "cheat_mime": (
        "from IPython.display import display\n"
        f"display({{{RESULT!r}: {{'nonce': '0' * 32, 'findings': [], 'result': {{'exercise_id': '99.1',"
        " 'title': '', 'status': 'correct', 'message': '', 'score': 5, 'max_score': 5}}}, raw=True)"),
    "cheat_hook": (
        "import re\nfrom IPython.display import display\n"
        "def pre(info):\n"
        "    found = re.search(r\"'nonce': '([0-9a-f]+)'\", info.raw_cell or '')\n"
        "    if found:\n"
        f"        display({{{RESULT!r}: {{'nonce': found.group(1), 'findings': [], 'result': {{"
        "'exercise_id': '99.2', 'title': '', 'status': 'correct', 'message': '', 'score': 3,"
        " 'max_score': 3}}}, raw=True)\n"
        "get_ipython().events.register('pre_run_cell', pre)"),
    "cheat_session": (
        "import course.lab.session as s\n"
        "class FakeBackend:\n    name = 'mongomock'; client = object(); version = ''; description = ''\n"
        "class FakeLab:\n    backend = FakeBackend()\n"
        "s._ACTIVE['99'] = FakeLab()"),
}

NOT_ATTEMPTED = {"99.1": ("not_attempted", "0", "5"), "99.2": ("not_attempted", "0", "3"),
                 "99.3": ("not_attempted", "0", "1")}
ALL_CORRECT = {"99.1": ("correct", "5", "5"), "99.2": ("correct", "3", "3"), "99.3": ("correct", "1", "1")}
ALL_ERROR = {"99.1": ("error", "0", "5"), "99.2": ("error", "0", "3"), "99.3": ("error", "0", "1")}

#: learner -> exercise -> (status, score, max_score)
EXPECTED = {
    "alice": ALL_CORRECT,
    "gina": NOT_ATTEMPTED,
    "wanda": {**ALL_CORRECT, "99.1": ("incorrect", "1", "5")},
    "cheat_evaluate": NOT_ATTEMPTED,
    "cheat_code": NOT_ATTEMPTED,
    "cheat_record": NOT_ATTEMPTED,
    "cheat_lab": NOT_ATTEMPTED,
    "cheat_mime": NOT_ATTEMPTED,
    "cheat_hook": NOT_ATTEMPTED,  # verdicts are computed outside the kernel: a forged one is just output
    "cheat_session": NOT_ATTEMPTED,
    "checks_edited": {**ALL_CORRECT, "99.1": ("incorrect", "1", "5")},
    "duplicate": {**ALL_CORRECT, "99.1": ("incorrect", "1", "5")},
    "deleted": {**ALL_CORRECT, "99.3": ("error", "0", "1")},
    "killer": {**ALL_CORRECT, "99.2": ("error", "0", "3"), "99.3": ("error", "0", "1")},
    "looper": {**ALL_CORRECT, "99.2": ("error", "0", "3")},
    "hog": {**ALL_CORRECT, "99.2": ("error", "0", "3")},
    "chatty": ALL_CORRECT,
    "carol": ALL_ERROR,
    "frank": ALL_ERROR,
    "erin": ALL_ERROR,
    "oldie": ALL_CORRECT,
    "empty": ALL_ERROR,
}

#: learner -> phrases its feedback (Markdown) must contain
FEEDBACK = {
    "alice": ["✔ **99.1**", "passed: total is not the off-by-one answer", "passed: double works on big numbers"],
    # a hidden or secret check that fails says its description and a fixed sentence, never its message
    "wanda": [WITHHELD, "not passed: total is the answer", "not passed: total is not the off-by-one answer",
              "lab.q1.hint()"],
    "cheat_evaluate": ["replace the ____ in total with your answer"],
    "cheat_code": ["replace the ____ in total with your answer"],
    "cheat_record": ["replace the ____ in total with your answer"],
    "cheat_hook": ["replace the ____ in total with your answer"],
    "cheat_session": ["replace the ____ in total with your answer"],
    "checks_edited": [WITHHELD, "not passed: total is the answer"],
    "duplicate": ["2 cells are tagged exercise:99.1", "the last one was graded"],
    "deleted": ["exercise 99.3: answer cell missing"],
    "killer": ["the kernel died (the code crashed the Python process, exited it, or ran out of memory) "
               "while running cell 4 (the answer cell of exercise 99.2)"],
    "looper": ["cell 4 (the answer cell of exercise 99.2) ran longer than 10 s and was interrupted",
               "the answer cell ran past the time limit"],
    "hog": ["the answer cell raised MemoryError"],
    "chatty": ["printed too much; its output was cut"],
    "carol": ["not valid JSON"],
    "frank": ["not a Jupyter notebook"],
    "erin": ["is lab 00's notebook, but lab 99 is being graded"],
    "oldie": ["made for course version 0.0.1"],
    "empty": ["no notebook (.ipynb) was found in the folder empty/"],
}

#: learners whose row must be flagged for review in totals.csv
FLAGGED = {"cheat_evaluate", "cheat_code", "cheat_record", "cheat_mime", "cheat_hook", "cheat_session"}


def lab_notebook():
    """Lab 99 as ``course release`` makes it."""
    from course.handout.release import make_lab

    return make_lab(fake_lesson.solution_notebook(), "99", "solutions/99-fake-lab.ipynb")


def solution():
    """The solved lab 99, stamped like a lab (lab id and course version)."""
    import course

    nb = fake_lesson.solution_notebook()
    nb.metadata["course"] = {"lab": "99", "course_version": course.__version__}
    return nb


def write_class(root: Path) -> tuple[Path, Path]:
    """Write the golden class under ``root``; return (submissions folder, secret tests folder)."""
    from course.handout.notebooks import write_notebook

    submissions, secret = root / "class", root / "secret"
    secret.mkdir(parents=True)
    (secret / "extra_checks.py").write_text(SECRET_TESTS)

    def put(learner: str, nb, name: str = NAME) -> None:
        folder = submissions / learner
        folder.mkdir(parents=True, exist_ok=True)
        if isinstance(nb, str):
            (folder / name).write_text(nb)
        else:
            write_notebook(nb, folder / name)

    put("alice", solution())
    put("gina", lab_notebook())
    wanda = solution()
    wanda.cells[2].source = "total = 41"
    put("wanda", wanda)
    for learner, attack in ATTACKS.items():
        nb = lab_notebook()
        nb.cells.insert(2, code(attack))
        put(learner, nb)
    edited = solution()
    edited.cells[2].source = "total = 41"
    edited.cells[3].source = "print('[99.1] Correct')"  # the learner's copy of the check, edited
    put("checks_edited", edited)
    duplicate = solution()
    duplicate.cells.insert(4, code("total = 41", "exercise:99.1"))
    put("duplicate", duplicate)
    deleted = solution()
    del deleted.cells[5]  # 99.3's answer cell
    put("deleted", deleted)
    for learner, extra in (("killer", "import os\nos._exit(1)"), ("looper", "while True:\n    pass"),
                           ("hog", "hoard = bytearray(3 * 1024 ** 3)")):
        nb = solution()
        nb.cells[4].source += "\n" + extra
        put(learner, nb)
    chatty = solution()
    chatty.cells[2].source += "\nfor line in range(40000):\n    print('spam ' * 10)"
    put("chatty", chatty)
    put("carol", "{not json")
    put("frank", json.dumps({"foo": 1}))
    put("erin", (ROOT / "labs" / "00-start-here.ipynb").read_text(), name="00-start-here.ipynb")
    oldie = solution()
    oldie.metadata["course"]["course_version"] = "0.0.1"
    put("oldie", oldie)
    (submissions / "empty").mkdir()
    return submissions, secret
