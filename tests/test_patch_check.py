"""The course's patches of mongoeco and mongomock check what they replace, and the pins hold them to it."""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest


from course.store.mongoeco.output_stages import _eager_output_stage
from course.store.patching import apply_patch
from course.store.backends import mongoeco_available
from course.store.patch_check import WRITTEN_FOR, PatchMismatch, check_replaced, source_digest, written_for

ROOT = Path(__file__).resolve().parents[1]
needs_mongoeco = pytest.mark.skipif(not mongoeco_available(), reason="mongoeco needs Python >= 3.13")


def python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (nothing patched yet), from the repository."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_BACKEND", "MONGODB_URI")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_pyproject_pins_each_patched_package_to_the_series_its_patches_were_written_for():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for package, release in WRITTEN_FOR.items():
        series = release.rsplit(".", 1)[0]
        pins = [d for d in dependencies if re.match(rf"{package}\s*==\s*{re.escape(series)}\.\*", d)]
        assert pins, f"pyproject.toml does not pin {package}=={series}.*"
        installed = metadata.version(package) if package != "mongoeco" or mongoeco_available() else None
        if installed:
            assert installed.startswith(series + "."), f"{package} {installed} is installed, outside the pin"


@pytest.mark.parametrize("backend", [pytest.param("mongoeco", marks=needs_mongoeco), "mongomock"])
def test_every_patch_fits_the_installed_release(backend):
    done = python(f"""
        from course.store.backends import open_{backend}
        from course.store.engine_imports import problems
        open_{backend}()
        assert not problems(), problems()
    """)
    assert done.returncode == 0, done.stderr


def test_a_function_another_release_changed_is_refused_and_left_as_it_is():
    class Collection:
        def aggregate(self, pipeline):  # not mongoeco 4.11's aggregate
            return list(pipeline)

    original = Collection.aggregate
    with pytest.raises(PatchMismatch) as refused:
        apply_patch(Collection, "aggregate", _eager_output_stage)
    message = str(refused.value)
    assert "course/store/mongoeco/output_stages.py patches mongoeco's" in message and "Collection.aggregate" in message
    assert f"written for mongoeco {WRITTEN_FOR['mongoeco']}" in message and "mongoeco==4.11.*" in message
    assert source_digest(original) in message
    assert Collection.aggregate is original


def test_a_patch_maker_must_say_what_it_was_written_for():
    def make(original):
        return original

    with pytest.raises(PatchMismatch, match="does not say which mongoeco function"):
        check_replaced(len, make)
    check_replaced(len, written_for("x", source_digest(len))(make))  # one of the digests it names: accepted


def test_the_digest_is_of_the_source():
    def one():
        return 1

    assert source_digest(one) == source_digest("    def one():\n        return 1\n")
    assert source_digest(len) == "unreadable"


@needs_mongoeco
def test_a_mismatch_leaves_mongoeco_unpatched_and_course_doctor_reports_it():
    done = python("""
        import sys
        from course.store.engine_imports import skip_unused_imports
        skip_unused_imports()
        from mongoeco.engines import memory
        from mongoeco.api._sync.collection import Collection

        async def create_index(self, *args, **kwargs):  # as if a 4.11.x release had changed it
            return None

        memory.MemoryEngine.create_index = create_index
        from course.cli import main
        code = main(["doctor"])
        assert not getattr(Collection.aggregate, "_course_quirk_absorbed", False), "patched before the check"
        sys.exit(code)
    """)
    assert done.returncode == 1, done
    first = done.stderr.splitlines()[:5]
    assert first[0].startswith("Python: ") and first[1].startswith("Backend: cannot be opened: course/store/mongoeco/index_builds.py")
    assert "MemoryEngine.create_index" in first[1] and "mongoeco==4.11.*" in first[1]
    assert any(line.startswith("Patches: PROBLEM: course/store/mongoeco/index_builds.py patches mongoeco's") for line in first)


@needs_mongoeco
def test_the_encoder_patch_checks_both_functions_it_replaces():
    done = python("""
        from course.store.engine_imports import skip_unused_imports
        skip_unused_imports()
        from mongoeco.core import codec
        from course.store.mongoeco.codec_speed import encoding_validated_once
        from course.store.patch_check import PatchMismatch
        codec.validate_bson_value = lambda value: None
        try:
            encoding_validated_once(codec)
        except PatchMismatch as error:
            assert "course/store/mongoeco/codec_speed.py patches mongoeco's" in str(error), error
            assert not hasattr(codec.DocumentCodec.encode, "_course_patched")
        else:
            raise AssertionError("patched a validate_bson_value it was not written for")
    """)
    assert done.returncode == 0, done.stderr


@needs_mongoeco
def test_a_deferred_module_of_another_release_is_imported_as_usual_and_reported():
    done = python("""
        import sys
        from course.store import engine_imports
        engine_imports.WRITTEN_FOR["mongoeco.core.geo"] = "0000000000000000"
        from course.cli import main
        code = main(["doctor"])
        assert not engine_imports.is_deferred("mongoeco.core.geo")
        assert engine_imports.is_deferred("mongoeco.cxp.exchange")
        sys.exit(code)
    """)
    assert done.returncode == 1, done
    patches = next(line for line in done.stderr.splitlines() if line.startswith("Patches: "))
    assert "PROBLEM: course/store/engine_imports.py patches mongoeco's module mongoeco.core.geo" in patches
    assert "imported as usual" in patches
