"""The engine's unused imports are skipped or deferred, and nothing that uses them can tell.

Each probe runs in a fresh interpreter, once with the course's deferral and once without, and the two must
print the same: geospatial queries (shapely), explain() (cxp), mongoeco's compatibility catalogue, numpy
read every way a learner might.  A synthetic package in a temporary folder checks the loaders' own rules.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types

import pytest

from course.store import engine_imports
from course.store.backends import mongoeco_available

needs_mongoeco = pytest.mark.skipif(not mongoeco_available(), reason="mongoeco needs Python >= 3.13")

START = """
import json, sys
from course.store.engine_imports import DEFERRED_FUNCTIONS, DEFERRED_MODULES, SKIPPED_IMPORTS, skip_unused_imports
if not {defer}:  # import them before the course could defer them: it leaves imported modules as they are
    import importlib
    for name in SKIPPED_IMPORTS:
        sys.modules.setdefault(name, None)
    for name in [*DEFERRED_MODULES, *DEFERRED_FUNCTIONS]:
        importlib.import_module(name)
skip_unused_imports()
"""

#: uses every deferred module after the course has started a lab; prints what it got, as JSON
USES = """
from course.lab.session import start_lab
lab = start_lab("01", show=False)
from course.store.engine_imports import is_deferred
deferred_after_start = sorted(n for n in [*DEFERRED_FUNCTIONS, *DEFERRED_MODULES] if is_deferred(n))
import mongoeco
db = mongoeco.MongoClient().geo_probe
db.places.insert_many([{"_id": i, "loc": {"type": "Point", "coordinates": [i * 0.5, i * 0.25]}} for i in range(8)])
db.places.create_index([("loc", "2dsphere")])
box = {"type": "Polygon", "coordinates": [[[0, 0], [2.1, 0], [2.1, 2], [0, 2], [0, 0]]]}
within = sorted(d["_id"] for d in db.places.find({"loc": {"$geoWithin": {"$geometry": box}}}))
near = [d["_id"] for d in db.places.find({"loc": {"$near": {"$geometry": {"type": "Point", "coordinates": [1, 0.5]}}}})][:4]
explained = sorted(db.places.find({"_id": {"$gt": 3}}).explain())
from mongoeco.compat.catalog import export_pymongo_profile_catalog
catalogue = sorted(export_pymongo_profile_catalog())
import numpy as np
numbers = [int(np.arange(5).sum()), float(np.linalg.norm(np.array([3.0, 4.0])))]
from numpy import array
import numpy.random
numbers.append(int(array([1, 2]).dot(array([3, 4]))))
numbers.append("ndarray" in dir(np))
print(json.dumps({"deferred after start_lab": deferred_after_start, "within": within, "near": near,
                  "explain keys": explained, "catalogue": catalogue, "numpy": numbers,
                  "shapely": "shapely" in sys.modules}))
"""


def run_probe(defer: bool) -> dict:
    code = START.format(defer=defer) + USES
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@needs_mongoeco
def test_deferred_modules_give_what_the_real_ones_give():
    deferred, eager = run_probe(True), run_probe(False)
    assert deferred.pop("deferred after start_lab") == sorted([*engine_imports.DEFERRED_FUNCTIONS,
                                                               *engine_imports.DEFERRED_MODULES])
    assert eager.pop("deferred after start_lab") == []
    assert deferred["within"] and deferred["near"] and deferred["catalogue"], deferred  # the probe probes
    assert deferred["shapely"] is True  # the geospatial queries loaded it when they needed it
    assert deferred == eager


@needs_mongoeco
def test_every_stand_in_is_a_function_of_the_real_module():
    """A stand-in only ever replaces a function: never a class or a constant someone tests against."""
    probe = START.format(defer=True) + textwrap.dedent("""
        import inspect
        from course.lab.session import start_lab
        from course.store.engine_imports import is_deferred, stand_in_names
        start_lab("01", show=False)
        report = {}
        for name in DEFERRED_FUNCTIONS:
            module = sys.modules[name]  # (loading one may have loaded another: the stand-ins stay listed)
            names = stand_in_names(module)
            try:
                module.no_such_name_here
            except AttributeError:
                pass
            assert not is_deferred(name), name
            report[name] = {n: inspect.isfunction(module.__dict__.get(n)) for n in names}
        print(json.dumps(report))
        """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert set(report) == set(engine_imports.DEFERRED_FUNCTIONS)
    for module, names in report.items():
        assert names, f"{module}: no stand-ins (nothing deferred)"
        assert all(names.values()), f"{module}: stand-ins for what the real module does not define as a function: " \
                                    f"{[n for n, is_function in names.items() if not is_function]}"


# ---- the loaders' rules, on a synthetic package ----------------------------------------------

@pytest.fixture
def synthetic(tmp_path, monkeypatch):
    """A package ``lazypkg`` with a module of functions and a re-exporting subpackage, made deferrable."""
    root = tmp_path / "lazypkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "funcs.py").write_text(textwrap.dedent("""
        import sys
        import lazypkg_loads
        lazypkg_loads.order.append("funcs")
        LIMIT = 3
        def double(x):
            return 2 * x
        async def later(x):
            return x + LIMIT
        class Shape:
            pass
    """))
    (root / "sub" / "__init__.py").write_text(textwrap.dedent("""
        import sys
        import lazypkg_loads
        lazypkg_loads.order.append("sub")
        from lazypkg.sub.inner import triple, CONSTANT
        from .inner import Triangle as Shape
    """))
    (root / "sub" / "inner.py").write_text("CONSTANT = 7\ndef triple(x):\n    return 3 * x\nclass Triangle:\n    pass\n")
    (root / "broken.py").write_text("raise RuntimeError('broken at import')\ndef f():\n    return 1\n")
    (root / "numberish" ).mkdir()
    (root / "numberish" / "__init__.py").write_text(
        "import lazypkg_loads\nlazypkg_loads.order.append('numberish')\nVALUE = 41\n")
    (root / "numberish" / "part.py").write_text("from lazypkg.numberish import VALUE\nPART = VALUE + 1\n")
    record = types.ModuleType("lazypkg_loads")
    record.order = []
    monkeypatch.setitem(sys.modules, "lazypkg_loads", record)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(engine_imports.DEFERRED_FUNCTIONS, "lazypkg.funcs", "test")
    monkeypatch.setitem(engine_imports.DEFERRED_FUNCTIONS, "lazypkg.sub", "test")
    monkeypatch.setitem(engine_imports.DEFERRED_FUNCTIONS, "lazypkg.broken", "test")
    monkeypatch.setitem(engine_imports.DEFERRED_MODULES, "lazypkg.numberish", "test")
    finder = engine_imports._DeferringFinder()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    yield
    for name in [n for n in sys.modules if n == "lazypkg" or n.startswith("lazypkg.")]:
        del sys.modules[name]


def loads() -> list[str]:
    """Which of the synthetic modules' code has run, in order."""
    return sys.modules["lazypkg_loads"].order


def test_a_stand_in_loads_the_module_when_called(synthetic):
    from lazypkg.funcs import double

    assert engine_imports.is_deferred("lazypkg.funcs") and loads() == []
    assert double(21) == 42 and loads() == ["funcs"]
    module = sys.modules["lazypkg.funcs"]
    assert module.double is not double and module.double(2) == 4  # the real function, in the same module
    assert double(1) == 2 and loads() == ["funcs"]  # loaded once


def test_an_async_stand_in_returns_the_real_coroutine(synthetic):
    import asyncio

    from lazypkg.funcs import later

    assert asyncio.run(later(1)) == 4


def test_any_other_name_loads_the_module_and_dunders_do_not(synthetic):
    import lazypkg.funcs as funcs

    assert not hasattr(funcs, "__path__") and loads() == []
    assert funcs.LIMIT == 3 and loads() == ["funcs"]
    assert isinstance(funcs.Shape(), funcs.Shape)
    with pytest.raises(AttributeError):
        funcs.missing


def test_a_package_gets_stand_ins_for_the_functions_it_re_exports(synthetic):
    from lazypkg.sub import triple

    assert loads() == [] and engine_imports.stand_in_names(sys.modules["lazypkg.sub"]) == ["triple"]
    assert triple(2) == 6 and loads() == ["sub"]
    from lazypkg.sub import CONSTANT, Shape

    assert CONSTANT == 7 and Shape.__name__ == "Triangle"


def test_a_class_or_constant_imported_by_name_loads_at_once(synthetic):
    from lazypkg.sub import CONSTANT

    assert CONSTANT == 7 and loads() == ["sub"]


def test_a_module_that_fails_fails_when_first_used_and_is_not_left_half_made(synthetic):
    from lazypkg.broken import f

    with pytest.raises(RuntimeError, match="broken at import"):
        f()
    assert "lazypkg.broken" not in sys.modules  # the next import tries again, as after a failed import
    with pytest.raises(ImportError, match="lazypkg.broken could not be loaded"):
        f()
    import lazypkg.broken

    with pytest.raises(RuntimeError, match="broken at import"):
        lazypkg.broken.f()


def test_a_deferred_package_loads_when_read_or_when_a_submodule_is_imported(synthetic):
    import lazypkg.numberish as numberish

    assert loads() == [] and engine_imports.is_deferred("lazypkg.numberish")
    assert type(numberish) is not types.ModuleType
    import lazypkg.numberish.part as part

    assert loads() == ["numberish"] and part.PART == 42 and numberish.VALUE == 41
    assert type(numberish) is types.ModuleType and not engine_imports.is_deferred("lazypkg.numberish")


def test_a_deferred_package_loads_for_dir_and_for_from_import(synthetic):
    import lazypkg.numberish as numberish

    assert "VALUE" in dir(numberish) and loads() == ["numberish"]
    from lazypkg.numberish import VALUE

    assert VALUE == 41


def test_installing_twice_adds_one_finder(monkeypatch):
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    engine_imports.skip_unused_imports()
    engine_imports.skip_unused_imports()
    assert sum(isinstance(f, engine_imports._DeferringFinder) for f in sys.meta_path) == 1
