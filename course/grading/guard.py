"""The grading cell: a self-contained bootstrap that grades from a verified, fresh copy of the package.

The learner's code runs in the same kernel before each grading cell, so it
may have replaced anything in the ``course`` modules it imported
(``Exercise.evaluate``, ``course.grading.kernel.record``, ``lab``, ...).
The grading cell therefore imports nothing from ``sys.modules``:

1. it sets aside every ``course.*`` module (and lesson or secret-test module),
2. installs an import hook that serves exactly the files of the
   :class:`Manifest` and refuses any whose SHA-256 differs from what the grader
   computed before the kernel started (a notebook that rewrote the package on
   disk gets an error, not a grade),
3. calls the fresh ``course.grading.kernel.grade_in_kernel``, publishes its
   payload (with the cell's secret nonce) and puts the learner's modules back.

The nonce is new for every grading cell and appears nowhere before that cell
runs, so output printed by the learner's cells cannot pass for a verdict.
"""

from __future__ import annotations

import hashlib
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path

import course

PACKAGE_ROOT = Path(course.__file__).resolve().parent


@dataclass(frozen=True)
class Manifest:
    """Module name -> (file, SHA-256, is package) for everything a grading cell may import."""

    modules: dict[str, tuple[str, str, bool]]
    lessons: dict[str, str] = field(default_factory=dict)  #: lab -> module name under course.lessons
    secret: tuple[str, ...] = ()  #: module names of the secret tests

    @property
    def digest(self) -> str:
        """One hash over every file: part of the resume key (new checks regrade)."""
        return self.digest_for(None)

    def digest_for(self, lab: str | None) -> str:
        """The hash over the files that grade ``lab`` (other labs' lessons left out when ``lab`` is given)."""
        blob = "\n".join(f"{name}:{sha}" for name, (_, sha, _) in sorted(self.modules.items())
                         if not (lab and _other_lesson(name, lab, self.lessons)))
        return hashlib.sha256(blob.encode()).hexdigest()

    def verify(self, relevant_to: str | None = None) -> list[str]:
        """Files that changed (or vanished) since the manifest was made.

        With ``relevant_to`` (a lab id), other labs' lesson modules are not looked at.
        """
        changed = []
        for name, (path, sha, _) in sorted(self.modules.items()):
            if relevant_to and _other_lesson(name, relevant_to, self.lessons):
                continue
            try:
                if hashlib.sha256(Path(path).read_bytes()).hexdigest() != sha:
                    changed.append(path)
            except OSError:
                changed.append(path)
        return changed


def _other_lesson(name: str, lab: str, lessons: dict[str, str]) -> bool:
    prefix = "course.lessons."
    if not name.startswith(prefix) or name.count(".") != 2:
        return False
    short = name[len(prefix):]
    return short != lessons.get(lab, f"lesson{lab}") and short.startswith(("lesson", "fake"))


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_manifest(lab: str | None = None, secret_files: dict[str, Path] | None = None) -> Manifest:
    """The course package's files, the module of ``lab`` if it lives elsewhere, and the secret tests."""
    import course.lessons

    modules: dict[str, tuple[str, str, bool]] = {}
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts = parts[:-1]
        name = ".".join(["course", *parts])
        modules[name] = (str(path), _sha(path), package)
    lessons = {}
    if lab and lab in course.lessons.MODULES:
        name = f"course.lessons.{course.lessons.MODULES[lab]}"
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if name not in modules and file:  # a lesson registered from outside the package (tests)
            modules[name] = (str(Path(file).resolve()), _sha(Path(file)), False)
            lessons[lab] = course.lessons.MODULES[lab]
    for name, path in (secret_files or {}).items():
        modules[name] = (str(path), _sha(Path(path)), False)
    return Manifest(modules, lessons, tuple(secret_files or {}))


_TEMPLATE = '''\
def _course_grading_cell(request, manifest):
    import hashlib, importlib.abc, importlib.util, sys
    from IPython.core.getipython import get_ipython

    class Verified(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name not in manifest:
                if name == "course" or name.startswith("course."):
                    raise ImportError(f"{name} is not part of the verified course package")
                return None
            file, _, package = manifest[name]
            places = [file.rsplit("/", 1)[0]] if package else None
            return importlib.util.spec_from_file_location(name, file, loader=self,
                                                          submodule_search_locations=places)

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            file, digest, _ = manifest[module.__name__]
            with open(file, "rb") as handle:
                source = handle.read()
            if hashlib.sha256(source).hexdigest() != digest:
                raise ImportError(f"{file} changed while grading")
            exec(compile(source, file, "exec"), module.__dict__)

    owned = lambda name: name == "course" or name.startswith("course.") or name in manifest
    old = {name: module for name, module in list(sys.modules.items()) if owned(name)}
    for name in old:
        del sys.modules[name]
    finder = Verified()
    sys.meta_path.insert(0, finder)
    fresh = {}
    try:
        kernel = importlib.import_module("course.grading.kernel")
        placeholder = importlib.import_module("course.placeholder")
        learner_placeholder = old.get("course.placeholder")
        if learner_placeholder is not None and isinstance(getattr(learner_placeholder, "Placeholder", None), type):
            placeholder.Placeholder = learner_placeholder.Placeholder  # the learner's ____ must still count
        for name in list(request["secret"]) + ["course.lessons"]:
            importlib.import_module(name)
        fresh = {name: module for name, module in sys.modules.items() if owned(name)}
        shell = get_ipython()
        namespace = shell.user_ns if shell is not None else {}
        payload = kernel.grade_in_kernel(request, old, fresh, namespace)
    except BaseException as error:
        payload = {"nonce": request["nonce"], "failure": f"{type(error).__name__}: {error}"}
    finally:
        sys.meta_path[:] = [f for f in sys.meta_path if f is not finder]
        for name in [n for n in sys.modules if owned(n)]:
            del sys.modules[name]
        sys.modules.update(old)
    kernel = fresh.get("course.grading.kernel")
    if kernel is not None:
        kernel.publish(payload)
    else:
        from IPython.display import display
        display({@@MIME@@: payload}, raw=True)


_course_grading_cell(@@REQUEST@@, @@MANIFEST@@)
del _course_grading_cell
'''


def grading_source(exercise_id: str, manifest: Manifest, backends: list[str], nonce: str) -> str:
    """The source of the grading cell of ``exercise_id``."""
    from course.grading import RESULT_MIME

    request = {"exercise": exercise_id, "nonce": nonce, "lessons": dict(manifest.lessons),
               "secret": list(manifest.secret), "backends": list(backends)}
    modules = {name: list(entry) for name, entry in manifest.modules.items()}
    return (_TEMPLATE.replace("@@MIME@@", repr(RESULT_MIME)).replace("@@MANIFEST@@", repr(modules))
            .replace("@@REQUEST@@", repr(request)))


def new_nonce() -> str:
    """A fresh secret for one grading cell."""
    return secrets.token_hex(16)


def expected_backends(env: dict[str, str]) -> list[str]:
    """The backend names a learner kernel with environment ``env`` may legitimately run on."""
    from course.backends import CHOICE_VARIABLE, URI_VARIABLE, mongoeco_available

    if env.get(URI_VARIABLE, "").strip():
        return ["server", "mongoeco-wire"]
    choice = env.get(CHOICE_VARIABLE, "").strip().lower()
    if choice:
        return [choice]
    return ["mongoeco"] if mongoeco_available() else ["mongomock"]
