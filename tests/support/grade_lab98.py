"""``course grade`` in a process of its own, with the fake labs 98 and 99 registered (tests only).

The relay-attack tests run the grader here rather than in the pytest process: a test process holds
threads other tests started (mongoeco's sync runner, tqdm's monitor), and a grader with threads
grades in-process, where the per-notebook time and memory bounds those tests are about never apply.
Usage: ``python -u grade_lab98.py ARGS...`` (the arguments of ``course grade``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for ``support``


def main(argv: list[str]) -> int:
    """Register labs 98 and 99 in this process and run ``course grade`` with ``argv``."""
    import course.lessons
    from course.cli import main as course_main
    from support import fake_lesson

    course.lessons.MODULES[fake_lesson.LAB] = fake_lesson.MODULE
    sys.modules[f"course.lessons.{fake_lesson.MODULE}"] = fake_lesson
    fake_lesson.install_db_lab()
    return course_main(["grade", *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
