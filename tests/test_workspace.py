"""The learner's work folder: filled from labs/ once, new labs added later, nothing ever overwritten."""

import json
from pathlib import Path

from course.cli import main
from course.lab.workspace import fill_work_folder

ROOT = Path(__file__).resolve().parents[1]


def _lab(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text)


def test_first_use_copies_and_later_runs_keep_the_learners_work(tmp_path):
    labs, work = tmp_path / "labs", tmp_path / "work"
    labs.mkdir()
    _lab(labs, "01-a.ipynb", "course 1")
    _lab(labs, "notes.txt", "not a lab")
    first = fill_work_folder(labs, work)
    assert first.copied == ["01-a.ipynb"] and (work / "01-a.ipynb").read_text() == "course 1"
    (work / "01-a.ipynb").write_text("my answers")
    _lab(labs, "01-a.ipynb", "course 1, updated")  # the course changed after a git pull
    _lab(labs, "02-b.ipynb", "course 2")  # and gained a lab
    second = fill_work_folder(labs, work)
    assert second.copied == ["02-b.ipynb"] and second.kept == ["01-a.ipynb"]
    assert (work / "01-a.ipynb").read_text() == "my answers"
    assert not (work / "notes.txt").exists()


def test_course_work_command(tmp_path, capsys):
    assert main(["work", "--labs", str(ROOT / "labs"), "--into", str(tmp_path / "w")]) == 0
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == sorted(p.name for p in (ROOT / "labs").glob("*.ipynb"))
    assert "copied" in capsys.readouterr().out
    assert main(["work", "--labs", str(tmp_path / "missing")]) == 2


def test_make_lab_serves_the_work_folder_without_news():
    makefile = (ROOT / "Makefile").read_text()
    assert "course work --labs labs --into $(WORK)" in makefile and "root_dir=$(WORK)" in makefile
    assert "work/" in (ROOT / ".gitignore").read_text().splitlines()
    overrides = json.loads((ROOT / "course" / "lab" / "jupyterlab-overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"] == {"fetchNews": "false", "checkForUpdates": False}


def test_in_a_fresh_clone_the_work_folder_is_the_learners_and_git_ignores_it(tmp_path):
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        import pytest

        pytest.skip("needs git and a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    assert main(["work", "--labs", str(clone / "labs"), "--into", str(clone / "work")]) == 0
    (clone / "work" / "01-design-for-reads.ipynb").write_text("my answers")
    status = subprocess.run(["git", "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True,
                            check=True).stdout
    assert status == ""  # a learner's answers never show up as changes to the course
    assert main(["work", "--labs", str(clone / "labs"), "--into", str(clone / "work")]) == 0
    assert (clone / "work" / "01-design-for-reads.ipynb").read_text() == "my answers"
