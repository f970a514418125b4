"""Shards of a class (``course grade --shard K/N``) and their merge (``course merge``).

A merged class writes the same report bytes as one unsharded run; a tampered, disagreeing or missing shard is
named and its learners listed, never hidden.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from course.cli import main
from course.grading import store
from course.grading.batch import grade_class
from course.grading.shards import parse_shard, shard_of
from support import shard_class

pytestmark = pytest.mark.containment


def _grade_shard(submissions: Path, out: Path, k: int, n: int, key_file: Path | None = None) -> None:
    with pytest.MonkeyPatch.context() as patch:
        shard_class.install(patch)
        grade_class([submissions], out, shard=(k, n), key_file=key_file, **shard_class.grade_options())


def _merge(*arguments: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["merge", *arguments])
    return code, out.getvalue(), err.getvalue()


def _rows(folder: Path, name: str = "gradebook.csv") -> list[dict[str, str]]:
    with (folder / name).open() as stream:
        return list(csv.DictReader(stream))


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """The class graded unsharded, and as 3 shards: 1/3 and 2/3 in one folder, 3/3 in another (its own key)."""
    submissions, reference = shard_class.unsharded(tmp_path_factory)
    root = tmp_path_factory.mktemp("sharded")
    shared, alone = root / "shared", root / "alone"
    for k in (1, 2):
        _grade_shard(submissions, shared, k, 3)
    _grade_shard(submissions, alone, 3, 3)
    return submissions, reference, shared, alone


def test_a_learner_keeps_its_shard_when_others_join():
    before = {name: shard_of(name, 4) for name in shard_class.LEARNERS}
    after = {name: shard_of(name, 4) for name in [*shard_class.LEARNERS, *(f"late{i}" for i in range(50))]}
    assert all(after[name] == shard for name, shard in before.items())
    assert set(before.values()) == {1, 2, 3, 4} and {shard_of(n, 3) for n in shard_class.LEARNERS} == {1, 2, 3}
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/4", "5/4", "4", "a/b", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


@pytest.mark.slow
def test_shards_grade_only_their_learners_and_write_no_shared_report(sharded):
    _, _, shared, alone = sharded
    graded = {path.parent.name for path in (shared / "results").rglob("*.json")}
    assert graded == {n for n in shard_class.LEARNERS if shard_of(n, 3) in (1, 2)}
    assert {p.parent.name for p in (alone / "results").rglob("*.json")} == \
        {n for n in shard_class.LEARNERS if shard_of(n, 3) == 3}
    assert not (shared / "gradebook.csv").exists()  # each shard writes its own, under shards/K-of-N/
    for k in (1, 2):
        rows = _rows(shared / "shards" / f"{k}-of-3")
        assert {r["learner"] for r in rows} == {n for n in shard_class.LEARNERS if shard_of(n, 3) == k}
        manifest = json.loads((shared / "shards" / f"{k}-of-3" / "manifest.json").read_text())
        assert manifest["complete"] and len(manifest["class"]) == len(shard_class.LEARNERS)


@pytest.mark.slow
def test_the_merge_writes_the_same_bytes_as_one_unsharded_run(sharded, tmp_path):
    _, reference, shared, alone = sharded
    code, out, err = _merge(str(shared), str(alone), "--out", str(tmp_path / "final"))
    assert code == 0, (out, err)
    assert "merged 8 notebooks for 8 learners" in out
    statuses = {(r["learner"], r["exercise"]): r["status"] for r in _rows(reference)}
    assert statuses[("ann", "99.1")] == "not_attempted" and statuses[("ben", "99.1")] == "correct" \
        and statuses[("cat", "99.1")] == "incorrect"  # really graded: the comparison is not of error rows
    assert shard_class.differences(reference, tmp_path / "final") == []
    assert len(list((tmp_path / "final" / "feedback").iterdir())) == 2 * len(shard_class.LEARNERS)


@pytest.mark.slow
def test_a_missing_shard_is_named_and_its_learners_get_rows(sharded, tmp_path):
    _, reference, shared, _ = sharded
    code, out, _ = _merge(str(shared), "--out", str(tmp_path / "final"))
    lost = sorted(n for n in shard_class.LEARNERS if shard_of(n, 3) == 3)
    assert code == 1 and f"not graded (missing shard or result): {', '.join(lost)}" in out
    summary = (tmp_path / "final" / "summary.md").read_text()
    assert f"shard 3/3 never reported (no manifest): its learners {', '.join(lost)} are not graded" in summary
    rows = _rows(tmp_path / "final")
    for learner in lost:  # one error row per exercise of the lab, with its points: totals stay comparable
        mine = [r for r in rows if r["learner"] == learner]
        assert [r["exercise"] for r in mine] == ["99.1", "99.2", "99.3"]
        assert all(r["status"] == "error" and "shard 3/3 never reported" in r["message"] for r in mine)
    kept = [r for r in _rows(reference) if shard_of(r["learner"], 3) != 3]
    assert [r for r in rows if r["learner"] not in lost] == kept


@pytest.mark.slow
def test_a_tampered_result_or_manifest_is_refused_and_named(sharded, tmp_path):
    _, _, shared, alone = sharded
    copy = tmp_path / "copy"
    shutil.copytree(shared, copy)
    victim = sorted(n for n in shard_class.LEARNERS if shard_of(n, 3) == 1)[0]
    result = next((copy / "results" / victim).glob("*.json"))
    record = json.loads(result.read_text())
    for r in record["graded"]["results"]:
        r["score"], r["status"] = r["max_score"], "correct"
    result.write_text(json.dumps(record))
    manifest = copy / "shards" / "2-of-3" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"complete": true', '"complete": false'))
    code, out, _ = _merge(str(copy), str(alone), "--out", str(tmp_path / "final"))
    assert code == 1
    assert f"refused results, to review: {victim}" in out
    summary = (tmp_path / "final" / "summary.md").read_text()
    assert f"refused the result of {victim} (99-fake-lab.ipynb): {result}: its MAC does not match" in summary
    assert f"refused the shard manifest {manifest}: its MAC does not match" in summary
    assert "shard 2/3 never reported" in summary  # its only manifest was refused: its learners are named
    totals = {r["learner"]: r for r in _rows(tmp_path / "final", "totals.csv")}
    assert totals[victim]["review"] == "yes" and totals[victim]["score"] == "0"


@pytest.mark.slow
def test_two_results_for_one_notebook_that_disagree_are_both_refused(sharded, tmp_path):
    _, _, shared, alone = sharded
    twin = tmp_path / "twin"
    shutil.copytree(alone, twin)
    learner = sorted(n for n in shard_class.LEARNERS if shard_of(n, 3) == 3)[0]
    result = next((twin / "results" / learner).glob("*.json"))
    record = json.loads(result.read_text())
    graded = store.graded_from_dict(record["graded"])
    graded.results[0] = type(graded.results[0]).from_dict({**graded.results[0].to_dict(), "message": "other"})
    store.save(twin, record["key"], graded, Path(record["graded"]["path"]), "other-run",
               mac_key=store.load_key(twin))  # a verified result, but not the same verdict
    code, out, _ = _merge(str(shared), str(alone), str(twin), "--out", str(tmp_path / "final"))
    assert code == 1 and f"refused results, to review: {learner}" in out
    row = next(r for r in _rows(tmp_path / "final") if r["learner"] == learner)
    assert row["status"] == "error" and "two results for this notebook disagree" in row["message"]
    assert str(alone) in row["message"] and str(twin) in row["message"]
    code, out, _ = _merge(str(shared), str(alone), str(alone), "--out", str(tmp_path / "again"))
    assert code == 0  # the same results twice agree: counted once


def test_a_merge_refuses_folders_it_cannot_verify(tmp_path):
    (tmp_path / "empty").mkdir()
    code, _, err = _merge(str(tmp_path / "empty"), "--out", str(tmp_path / "final"))
    assert code == 2 and "no grader key" in err
    code, _, err = _merge(str(tmp_path / "nowhere"), "--out", str(tmp_path / "final"))
    assert code == 2 and "is not a folder" in err
