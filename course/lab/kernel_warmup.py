"""Warm a kernel before its notebook opens: import what ``start_lab`` needs, and run a throwaway engine.

A spare kernel of ``make lab`` (:mod:`course.lab.spare_kernels`) runs :func:`warm_up`
silently before any learner sees it, so that the lab's first cell opens its
database in a few hundredths of a second instead of importing the engine.  It
leaves no trace a learner could see: no name in the notebook's namespace, no
entry in its history, no database (the throwaway engine is closed, and the
backend the lab opens is still opened by ``start_lab`` itself), no import
refused that a kernel nobody warmed would give.  What it does change is what
``start_lab`` would change anyway: its modules are loaded, and the engine's
import finder (:mod:`course.store.engine_imports`) is in place.  ``course grade`` warms the
next notebook's kernel the same way (:mod:`course.grading.ahead`).
"""

from __future__ import annotations

import os
import sys
from typing import Mapping

WARM_UP_CODE = "__import__('course.lab.kernel_warmup', fromlist=['warm_up']).warm_up()"  #: what a spare kernel runs
SCRATCH = "course_warmup_scratch"  #: the throwaway engine's only database


def warm_up(env: Mapping[str, str] | None = None) -> str:
    """Import the lab's modules and the engine ``start_lab`` would open; return that engine's name.

    With ``MONGODB_URI`` set nothing connects (the server is the learner's): only the driver is imported.
    The imports the engine skips (:data:`~course.store.engine_imports.SKIPPED_IMPORTS`) are skipped only
    while it warms up: afterwards a cell importing one of them before ``start_lab`` (which skips them
    again) gets it, as in a kernel nobody warmed.
    """
    from course.store.engine_imports import SKIPPED_IMPORTS, skip_unused_imports

    refused = [name for name in SKIPPED_IMPORTS if name not in sys.modules]  # what this warm-up refuses
    skip_unused_imports()
    try:
        return _open_and_exercise(os.environ if env is None else env)
    finally:
        for name in refused:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _open_and_exercise(env: Mapping[str, str]) -> str:
    from course.store.backends import CHOICE_VARIABLE, mongoeco_available, open_mongoeco, open_mongomock, server_uri

    import course.lab.session  # noqa: F401 - the lab's first cell imports it

    try:
        uri = server_uri(env)
    except Exception:  # noqa: BLE001 - start_lab reports a bad URI; warming up says nothing
        uri = "unusable"
    if uri:
        import pymongo  # noqa: F401

        return "server"
    choice = env.get(CHOICE_VARIABLE, "").strip().lower()
    if choice == "mongomock" or (choice != "mongoeco" and not mongoeco_available()):
        backend = open_mongomock()
    elif choice in ("", "mongoeco"):
        backend = open_mongoeco()
    else:
        return "none"  # an unknown choice: start_lab says what is wrong
    try:
        _exercise(backend.client)
    finally:
        backend.client.close()
    return backend.name


def _exercise(client: object) -> None:
    """The commands every lab's first cells send, once, on a database nobody else sees."""
    database = client[SCRATCH]
    database.warm.insert_many([{"_id": 1, "n": 1}, {"_id": 2, "n": 2}])
    database.warm.update_one({"_id": 1}, {"$inc": {"n": 1}})
    database.warm.create_index("n")
    list(database.warm.find({"n": {"$gte": 1}}).sort("n", 1))
    list(database.warm.aggregate([{"$group": {"_id": None, "n": {"$sum": "$n"}}}]))
    client.drop_database(SCRATCH)
