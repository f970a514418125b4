"""`course doctor` answers first: Python, backend, sandbox, WiredTiger, patches, and what each missing thing costs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from course.setup import prereqs
from test_prereqs import path_without

ROOT = Path(__file__).resolve().parents[1]
FIRST = ("Python: ", "Backend: ", "Sandbox: ", "WiredTiger: ", "Patches: ", "Missing")


def doctor(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "course", "doctor"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**{k: v for k, v in os.environ.items() if k != "MONGODB_URI"}, **env})


def test_the_first_lines_say_what_decides_what_works_and_the_quirks_come_last_and_short():
    done = doctor({"COURSE_BACKEND": "mongomock"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line[:len(start)] for line, start in zip(lines, FIRST)] == list(FIRST), lines[:6]
    assert lines[1].startswith("Backend: mongomock (") and "Patches: every patch of mongomock fits" in lines[4]
    table = lines.index("System prerequisites (make prereqs installs the missing ones, or says how):")
    assert table < 12 and any(line.split()[1:2] == ["bubblewrap"] for line in lines[table:table + 9])
    quirks = lines.index(next(line for line in lines if line.startswith("Quirks the course absorbs")))
    assert quirks > table and all(len(line) <= 120 for line in lines[quirks:])


def test_without_bubblewrap_it_says_so_first_with_what_is_lost_and_the_command(tmp_path):
    done = doctor({"COURSE_BACKEND": "mongomock", "PATH": path_without(tmp_path, "bwrap")})
    assert done.returncode == 0, done.stderr  # a missing prerequisite is reported, not a failure
    lines = done.stdout.splitlines()
    assert lines[2].startswith("Sandbox: MISSING: bubblewrap (bwrap) is not installed")
    assert "course grade` refuses" in lines[2]
    missing = next(line for line in lines[:8] if line.startswith("Missing bubblewrap: "))
    command, _ = prereqs.install_command([p for p in prereqs.PREREQUISITES if p.name == "bubblewrap"],
                                         prereqs.platform_name(), os.geteuid() == 0)
    assert "make test stops" in missing and f"install with `{command}`" in missing
    assert any(line.split()[:2] == ["MISSING", "bubblewrap"] for line in lines)
