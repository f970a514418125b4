"""The grader's code inside the learner's kernel.

The grader inserts, right after each answer cell, a *grading cell* (see
:func:`course.grading.guard.grading_source`).  That cell does not trust
anything the learner's code could have touched: it sets aside every
``course`` module the notebook imported, loads a fresh copy of the course
package (and of the secret tests) from source files whose SHA-256 the grader
computed before the run, and calls :func:`grade_in_kernel` of that fresh copy.
The verdict is published once, as :data:`RESULT_MIME` display data that
carries the cell's secret nonce; the grader accepts it only from that cell.

:func:`grade_in_kernel` takes nothing from the learner's session but

* the answer variables (the notebook's namespace),
* the database client of the lab the notebook started (its exact type is
  checked against the backend the grader expects),

and it reports, as *findings*, course code that the notebook modified
(``course.exercise.Exercise.evaluate`` replaced, ...), hooks that could
rewrite the cell's output, and a lab that was never started.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Mapping

from course.grading import RESULT_MIME

NOT_STARTED = "the lab was never started: the first code cell (start_lab) is missing or failed"
_CLIENT_TYPES = {  # backend name -> (module, class name) of the client that backend opens
    "mongoeco": ("mongoeco", "MongoClient"),
    "mongomock": ("mongomock", "MongoClient"),
    "server": ("pymongo", "MongoClient"),
    "mongoeco-wire": ("pymongo", "MongoClient"),
}


# ---- the fresh grader (runs from a verified copy of the package) -------------------------

def _code_key(function: Any) -> tuple | None:
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    return (code.co_name, code.co_code, code.co_consts, code.co_names, code.co_varnames, code.co_argcount)


def _members(namespace: Mapping[str, Any], module_name: str) -> dict[str, Any]:
    """Functions and classes that ``module_name`` itself defines in ``namespace``."""
    return {k: v for k, v in namespace.items()
            if isinstance(v, (types.FunctionType, type)) and getattr(v, "__module__", None) == module_name}


def _same_function(old: Any, new: Any) -> bool:
    if isinstance(new, (staticmethod, classmethod)):
        return isinstance(old, type(new)) and _same_function(old.__func__, new.__func__)
    if isinstance(new, property):
        return isinstance(old, property) and all(
            _same_function(getattr(old, part), getattr(new, part)) for part in ("fget", "fset", "fdel"))
    if new is None or not callable(new):
        return True
    return _code_key(old) == _code_key(new)


def modified_course_code(old_modules: Mapping[str, Any], fresh_modules: Mapping[str, Any]) -> list[str]:
    """Names of course functions and methods the notebook replaced or changed (bytecode differs)."""
    found = []
    for name, fresh in sorted(fresh_modules.items()):
        old = old_modules.get(name)
        if old is None or not hasattr(fresh, "__dict__") or not hasattr(old, "__dict__"):
            continue
        for attr, new in _members(vars(fresh), name).items():
            was = vars(old).get(attr)
            if isinstance(new, type):
                if not isinstance(was, type):
                    found.append(f"{name}.{attr}")
                    continue
                for method, value in vars(new).items():
                    if isinstance(value, (types.FunctionType, staticmethod, classmethod, property)):
                        if not _same_function(vars(was).get(method), value):
                            found.append(f"{name}.{attr}.{method}")
            elif not _same_function(was, new):
                found.append(f"{name}.{attr}")
    return found


def _library_function(function: Any, package: str) -> bool:
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    if code is None:
        return True  # a builtin: not learner code
    return f"/{package}/" in code.co_filename.replace("\\", "/")


def suspicious_hooks() -> list[str]:
    """Output and execution hooks that learner code installed (they could rewrite a verdict)."""
    found = []
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        publisher = shell.display_pub
        if "publish" in vars(publisher) or not _library_function(type(publisher).publish, "IPython") \
                and not _library_function(type(publisher).publish, "ipykernel"):
            found.append("the display publisher was replaced")
        for event, callbacks in getattr(shell.events, "callbacks", {}).items():
            for callback in callbacks:
                if not any(_library_function(callback, p) for p in ("IPython", "ipykernel", "ipywidgets",
                                                                    "matplotlib", "matplotlib_inline")):
                    found.append(f"a {event} event callback was registered")
    if sys.gettrace() is not None and not _library_function(sys.gettrace(), "debugpy"):
        found.append("a trace function was installed (sys.settrace)")
    if sys.getprofile() is not None:
        found.append("a profile function was installed (sys.setprofile)")
    return sorted(set(found))


def _backend_for(old_lab: Any, expected: list[str]) -> Any:
    """A fresh Backend around the learner lab's client, after checking that client is genuine."""
    from course.backends import Backend

    old_backend = getattr(old_lab, "backend", None)
    name = getattr(old_backend, "name", None)
    client = getattr(old_backend, "client", None)
    if name not in expected:
        raise ValueError(f"the lab runs on {name!r}, but grading uses {' or '.join(expected)}")
    module, cls = _CLIENT_TYPES[name]
    library = sys.modules.get(module)
    if library is None or type(client) is not getattr(library, cls, None):
        raise ValueError(f"the lab's database client is of type {type(client).__name__}, not {module}.{cls}")
    return Backend(name=name, version=str(getattr(old_backend, "version", "")),
                   description=str(getattr(old_backend, "description", "")), client=client)


def _with_secret_tests(exercise_class: type, secret_modules: list[Any]) -> type:
    """``exercise_class`` plus the secret assertions that target it (as hidden assertions)."""
    from course.grading.secret import secret_assertions

    extra = secret_assertions(secret_modules, exercise_class.id)
    if not extra:
        return exercise_class
    members = {f"_secret_{n}": function for n, function in enumerate(extra)}
    return type(exercise_class.__name__, (exercise_class,), members)


def grade_in_kernel(request: Mapping[str, Any], old_modules: Mapping[str, Any],
                    fresh_modules: Mapping[str, Any], namespace: Mapping[str, Any]) -> dict:
    """Grade one exercise with this (fresh) copy of the package; return the payload to publish."""
    import course.lessons
    from course.results import Result, Status
    from course.session import Lab

    exercise_id = request["exercise"]
    lab_id = exercise_id.split(".", 1)[0]
    course.lessons.MODULES.update(request.get("lessons", {}))
    findings = [f"course code was modified in the notebook: {name}"
                for name in modified_course_code(old_modules, fresh_modules)]
    findings += suspicious_hooks()
    secret = [fresh_modules[name] for name in request.get("secret", []) if name in fresh_modules]

    def payload(result: Result) -> dict:
        return {"nonce": request["nonce"], "result": result.to_dict(), "findings": findings}

    module = course.lessons.lesson(lab_id)
    classes = {cls.id: cls for cls in module.EXERCISES}
    if exercise_id not in classes:
        return payload(Result(exercise_id, "", Status.ERROR, f"lab {lab_id} has no exercise {exercise_id}", 0, 0))
    exercise_class = _with_secret_tests(classes[exercise_id], secret)
    old_session = old_modules.get("course.session")
    active = getattr(old_session, "_ACTIVE", None)
    old_lab = active.get(lab_id) if isinstance(active, dict) else None
    if old_lab is None:
        return payload(Result(exercise_id, exercise_class.title, Status.ERROR, NOT_STARTED,
                              0.0, exercise_class.max_points()))
    try:
        lab = Lab(lab_id, _backend_for(old_lab, list(request["backends"])))
    except ValueError as error:
        findings.append(f"the lab's session was tampered with: {error}")
        return payload(Result(exercise_id, exercise_class.title, Status.ERROR,
                              f"could not grade: {error}", 0.0, exercise_class.max_points()))
    exercise = exercise_class(lab)
    try:
        result = exercise.evaluate(namespace, include_hidden=True)
    except Exception as error:  # the engine itself failed: say so without a traceback
        result = Result(exercise_id, exercise.title, Status.ERROR,
                        f"grading failed: {type(error).__name__}: {error}", 0.0, exercise.max_points())
    return payload(result)


def publish(payload: dict) -> None:
    """Send ``payload`` to the grader as display data of type :data:`RESULT_MIME`."""
    from IPython.core.getipython import get_ipython

    shell = get_ipython()
    if shell is not None:
        type(shell.display_pub).publish(shell.display_pub, data={RESULT_MIME: payload}, metadata={})
    else:  # pragma: no cover - only outside IPython
        print(payload)


# ---- the former in-kernel API (kept for notebooks and tools that call it) -----------------

def evaluate(exercise_id: str) -> dict:
    """Grade exercise ``exercise_id`` against the notebook's variables, as a dict (no isolation)."""
    from course.exercise import notebook_namespace
    from course.results import Result, Status
    from course.session import active_lab

    lab_id = exercise_id.split(".", 1)[0]
    lab = active_lab(lab_id)
    if lab is None:
        return Result(exercise_id, "", Status.ERROR, NOT_STARTED, 0.0, 0.0).to_dict()
    exercise = lab.exercises.get(exercise_id)
    if exercise is None:
        return Result(exercise_id, "", Status.ERROR,
                      f"lab {lab_id} has no exercise {exercise_id}", 0.0, 0.0).to_dict()
    try:
        return exercise.evaluate(notebook_namespace(), include_hidden=True).to_dict()
    except Exception as error:
        return Result(exercise_id, exercise.title, Status.ERROR,
                      f"grading failed: {type(error).__name__}: {error}",
                      0.0, exercise.max_points()).to_dict()


def record(exercise_id: str) -> None:
    """Grade ``exercise_id`` and display the result (no isolation; the grader does not use this)."""
    from IPython.display import display

    display({RESULT_MIME: evaluate(exercise_id)}, raw=True)
