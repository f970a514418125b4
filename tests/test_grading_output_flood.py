"""A notebook that prints hundreds of megabytes costs the grader little memory and nobody any grade.

The kernel cuts its own streams past the output cap (the launcher), and the grader's IOPub socket
refuses any single oversized message (for output that goes around the streams, such as ``display``).
Each run is a separate ``course grade`` process whose own peak memory (``ru_maxrss``) is compared
with a quiet class's.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from support import fake_lesson, golden_class

pytestmark = [pytest.mark.slow, pytest.mark.containment]
TESTS = Path(__file__).resolve().parent
#: how much more the grader may hold at its peak for a flooding class than for a quiet one
HEADROOM_KB = 100 * 1024

GRADE = """
import json, resource, sys
sys.path[:0] = [{tests!r}, {root!r}]
import pytest
from test_grading import _install
_install(pytest.MonkeyPatch())
from course.cli import main
code = main({arguments!r})
print(json.dumps({{"code": code, "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""

FLOODS = {
    "one-big-print": "\nprint('x' * 300_000_000)",
    "many-prints": "\nfor _ in range(300):\n    print('y' * 1_000_000)",
    "display-around-the-streams": "\nfrom IPython.display import HTML, display\ndisplay(HTML('z' * 20_000_000))",
}


def _grade(root: Path, learners: dict[str, str]) -> tuple[dict, list[dict], Path]:
    from course.handout.notebooks import write_notebook

    for learner, extra in learners.items():
        nb = golden_class.solution()
        if extra:  # a last cell: output lost to a dropped connection costs the cells after it a wait each
            nb.cells.append(fake_lesson.code(extra.strip()))
        (root / "class" / learner).mkdir(parents=True)
        write_notebook(nb, root / "class" / learner / "99-fake-lab.ipynb")
    arguments = ["grade", str(root / "class"), "--out", str(root / "out"), "--lab", "99", "--jobs", "1",
                 "--timeout", "60", "--memory-mb", "1536", *fake_lesson.sandbox_arguments()]
    script = GRADE.format(tests=str(TESTS), root=str(TESTS.parent), arguments=arguments)
    env = {"PATH": "/usr/bin:/bin", "COURSE_BACKEND": "mongomock", "HOME": str(root)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    with (root / "out" / "gradebook.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return report, rows, root / "out"


def test_floods_of_output_cost_the_grader_little_memory_and_no_grade(tmp_path):
    quiet, _, _ = _grade(tmp_path / "quiet", {"quiet": ""})
    flooded, rows, out = _grade(tmp_path / "flood", FLOODS)
    print("grader peak KB: quiet", quiet["maxrss_kb"], "flooded", flooded["maxrss_kb"])
    assert quiet["code"] == 0 and flooded["code"] == 0
    extra_kb = flooded["maxrss_kb"] - quiet["maxrss_kb"]
    assert extra_kb < HEADROOM_KB, f"the grader held {extra_kb} KB more for the flooding class"
    for learner in FLOODS:
        mine = {row["exercise"]: (row["status"], row["score"] == row["max_score"])
                for row in rows if row["learner"] == learner}
        assert mine == {e: ("correct", True) for e in golden_class.EXPECTED["alice"]}, learner
    for learner in ("one-big-print", "many-prints"):
        assert "printed too much; its output was cut" in (out / "feedback" / f"{learner}.md").read_text()
