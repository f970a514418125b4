"""The learners' copy of the package is made once per version of the course, kept whole, and compiled."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from course.grading import package_cache


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> SimpleNamespace:
    """A tiny checkout (course/ and labs/), a private cache folder, and a maker that counts its calls."""
    root = tmp_path / "repo"
    (root / "course" / "lessons").mkdir(parents=True)
    (root / "course" / "__init__.py").write_text("")
    (root / "course" / "lessons" / "lesson01.py").write_text("ANSWER = 1\n")
    (root / "labs").mkdir()
    (root / "labs" / "01-x.ipynb").write_text("{}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    calls: list[Path] = []

    def make(target: Path, *, root: Path) -> Path:
        calls.append(target)
        package = target / "course"
        for source in (root / "course").rglob("*.py"):
            destination = package / source.relative_to(root / "course")
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.write_text(source.read_text())
        return package

    monkeypatch.setattr("course.handout.build.learner_package", make)
    return SimpleNamespace(root=root, calls=calls)


def test_the_copy_is_made_once_and_then_reused(checkout):
    first = package_cache.cached_learner_package(checkout.root)
    second = package_cache.cached_learner_package(checkout.root)
    assert first == second and len(checkout.calls) == 1
    assert (first / "lessons" / "lesson01.py").read_text() == "ANSWER = 1\n"
    assert first.is_relative_to(package_cache.cache_folder())
    assert list(first.rglob("__pycache__/lesson01.*.pyc")), "compiled: a read-only sandbox cannot write its own"
    assert not [p for p in package_cache.cache_folder().iterdir() if p.name.startswith(".building-")]


def test_any_change_to_the_course_or_a_lab_makes_a_new_copy(checkout):
    first = package_cache.cached_learner_package(checkout.root)
    (checkout.root / "course" / "lessons" / "lesson01.py").write_text("ANSWER = 2\n")
    second = package_cache.cached_learner_package(checkout.root)
    (checkout.root / "labs" / "01-x.ipynb").write_text('{"cells": []}')
    third = package_cache.cached_learner_package(checkout.root)
    assert len({first, second, third}) == 3 and len(checkout.calls) == 3
    assert (second / "lessons" / "lesson01.py").read_text() == "ANSWER = 2\n"


def test_a_copy_left_half_made_is_never_used(checkout):
    final = package_cache.cache_folder() / package_cache.inputs_digest(checkout.root)[:32]
    (final / "course").mkdir(parents=True)  # a run died before writing the "complete" marker
    (final / "course" / "planted.py").write_text("")
    package = package_cache.cached_learner_package(checkout.root)
    assert len(checkout.calls) == 1 and (package / "lessons" / "lesson01.py").is_file()


def test_only_the_most_recent_copies_are_kept(checkout):
    made = []
    for version in range(package_cache.KEPT + 2):
        (checkout.root / "course" / "lessons" / "lesson01.py").write_text(f"ANSWER = {version}\n")
        made.append(package_cache.cached_learner_package(checkout.root).parent)
        os.utime(made[-1], (version, version))  # an increasing last use, whatever the clock's resolution
    kept = {p for p in package_cache.cache_folder().iterdir() if p.is_dir()}
    assert made[-1] in kept and len(kept) == package_cache.KEPT
    assert made[0] not in kept and made[1] not in kept


def test_an_unsafe_copy_is_refused_and_not_kept(checkout, monkeypatch):
    from course.handout.build import HandoutError

    def unsafe(target: Path, *, root: Path) -> Path:
        raise HandoutError("the learners' copy of the package is not safe: a hidden check is left in")

    monkeypatch.setattr("course.handout.build.learner_package", unsafe)
    with pytest.raises(HandoutError, match="not safe"):
        package_cache.cached_learner_package(checkout.root)
    assert not [p for p in package_cache.cache_folder().iterdir()]


@pytest.mark.parametrize("tamper", ["change", "add", "remove", "pyc"])
def test_a_kept_copy_that_differs_from_its_manifest_is_made_again_and_the_run_says_so(checkout, tamper):
    first = package_cache.cached_learner_package(checkout.root)
    target = first / "lessons" / "lesson01.py"
    if tamper == "change":
        target.write_text("ANSWER = 1\nimport os  # planted by an unsandboxed notebook\n")
    elif tamper == "add":
        (first / "sitecustomize.py").write_text("print('planted')\n")
    elif tamper == "remove":
        target.unlink()
    else:
        pyc = next(first.rglob("__pycache__/lesson01.*.pyc"))
        pyc.write_bytes(pyc.read_bytes() + b"planted")
    before = len(package_cache.REPAIRED)
    second = package_cache.cached_learner_package(checkout.root)
    assert second == first and len(checkout.calls) == 2
    assert len(package_cache.REPAIRED) == before + 1 and "did not match its manifest" in package_cache.REPAIRED[-1]
    assert target.read_text() == "ANSWER = 1\n" and not (first / "sitecustomize.py").exists()
    assert package_cache.differences(first.parent) == []
    package_cache.cached_learner_package(checkout.root)
    assert len(checkout.calls) == 2 and len(package_cache.REPAIRED) == before + 1  # whole again: reused
