"""``course grade --slurm N`` on a real single-node Slurm (munged, slurmctld and slurmd on loopback).

The cluster (tests/support/slurm_cluster.py) is started once for this file and stopped afterwards.  Under
make test (``COURSE_REQUIRE_SANDBOX=1``) a cluster that cannot start is a failure, never a skip.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys

import pytest

from course.grading.shards import shard_of
from support import shard_class, slurm_cluster

pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.containment]  # once per CI run, as the grader's other tests


@pytest.fixture(scope="module")
def cluster():
    """A running single-node cluster with this machine's cores as slots."""
    why = slurm_cluster.missing()
    if why:
        (pytest.fail if os.environ.get("COURSE_REQUIRE_SANDBOX") == "1" else pytest.skip)(
            f"cannot start a Slurm cluster here: {why}")
    running = slurm_cluster.start()
    yield running
    running.stop()


def _submit(cluster, submissions, out, tmp_path, *extra: str) -> tuple[str, str, str]:
    """Run ``course grade --slurm 4``; (array job id, merge job id, its stdout)."""
    env = cluster.env(shard_class.course_env(tmp_path / "site"))
    done = subprocess.run([sys.executable, "-m", "course", "grade", str(submissions), "--out", str(out),
                           "--slurm", "4", *shard_class.ARGUMENTS, *extra], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done
    found = re.search(r"grading job array (\d+) and the merge job (\d+)", done.stdout)
    assert found, done.stdout
    return found.group(1), found.group(2), done.stdout


def test_a_class_graded_on_slurm_equals_one_unsharded_run(cluster, tmp_path, tmp_path_factory):
    submissions, reference = shard_class.unsharded(tmp_path_factory)
    out = tmp_path / "out"
    array, merge, said = _submit(cluster, submissions, out, tmp_path)
    assert f"the gradebook will appear in {out / 'gradebook.csv'} when job {merge} ends" in said
    assert cluster.wait(merge, timeout=600) == "COMPLETED", (out / "slurm" / "logs").iterdir()
    states = cluster.run("scontrol", "show", "job", array)
    assert states.count("JobState=COMPLETED") == 4 and "--shard \"$SLURM_ARRAY_TASK_ID/4\"" in \
        (out / "slurm" / "grade.sbatch").read_text()
    script = (out / "slurm" / "grade.sbatch").read_text()
    assert "#SBATCH --array=1-4" in script and "#SBATCH --cpus-per-task=1" in script and "--jobs 1" in script
    assert "--dependency=afterany:" in (out / "slurm" / "submit.sh").read_text()
    assert sorted(p.name for p in (out / "shards").iterdir()) == [f"{k}-of-4" for k in range(1, 5)]
    assert shard_class.differences(reference, out) == []


def test_a_killed_array_task_leaves_a_gradebook_naming_its_learners(cluster, tmp_path, tmp_path_factory):
    submissions, _ = shard_class.unsharded(tmp_path_factory)
    out = tmp_path / "out"
    array, merge, _ = _submit(cluster, submissions, out, tmp_path, "--slurm-args=--hold")
    cluster.run("scancel", f"{array}_2")  # held, so it never started: as if its node died before it ran
    cluster.run("scontrol", "release", array)
    cluster.run("scontrol", "release", merge)
    assert cluster.wait(merge, timeout=600) == "FAILED"  # course merge exits 1: something is missing
    lost = sorted(n for n in shard_class.LEARNERS if shard_of(n, 4) == 2)
    assert lost
    with (out / "gradebook.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    for learner in lost:
        mine = [r for r in rows if r["learner"] == learner]
        assert mine and all(r["status"] == "error" and "shard 2/4 never reported" in r["message"] for r in mine)
    assert {r["learner"] for r in rows} == set(shard_class.LEARNERS)
    summary = (out / "summary.md").read_text()
    assert f"shard 2/4 never reported (no manifest): its learners {', '.join(lost)} are not graded" in summary
