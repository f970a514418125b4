"""A bubblewrap sandbox for one learner kernel.

``bwrap`` (Debian's ``bubblewrap``, the unprivileged sandbox Flatpak uses)
starts the kernel in new user, PID, IPC, mount, network, UTS and cgroup
namespaces, as ``nobody`` (65534), in a new session, with:

* read-only: ``/usr`` and ``/lib*``, a few files of ``/etc`` (TLS roots, time
  zone, the loader cache), this Python's installation and virtual
  environment, the course package *as learners get it* (hidden checks
  withheld: :func:`learner_package`), ``data/``, and any ``COURSE_GRADE_KERNEL_PATH``
  folders (extra lesson modules, for tests);
* writable: a private ``/tmp`` (tmpfs), the private work folder holding a
  copy of the one notebook being graded (the kernel's working directory), and
  the socket folder that carries the kernel's channels, the grader's channel
  and the checks' relay;
* nothing else: not the class folder, not ``--out``, not the secret tests,
  not the repository's tests, not the grader's ``/proc``, not other kernels.

There is no network at all (the kernel's channels use jupyter_client's
``ipc`` transport).  When the grader kills ``bwrap``, the PID namespace dies
with it, and with it everything the learner started.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

BWRAP = "bwrap"
NOBODY = 65534
TMP_BYTES = 256 * 1024 * 1024  #: the sandbox's private /tmp (a tmpfs, so memory) holds at most this
KERNEL_PATH_VARIABLE = "COURSE_GRADE_KERNEL_PATH"
#: What grading without the sandbox gives up (``course grade --unsandboxed`` prints it).
LOST_WITHOUT_SANDBOX = (
    "without the sandbox each kernel runs as your own user with your files in reach: a notebook can read "
    "and change other learners' submissions, the results in --out (and so the grades on the next run), "
    "the course package and your secret tests, reach the network, and leave processes behind. Verdicts "
    "are still computed outside the kernels, so an untouched notebook cannot score, but do this only for "
    "code you trust.")


def bwrap_path() -> str | None:
    """The ``bwrap`` executable on PATH, if any."""
    return shutil.which(BWRAP)


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str:
    """"" when bwrap can start a sandbox here, else why not (in plain words)."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (bubblewrap); this is {sys.platform}"
    path = bwrap_path()
    if path is None:
        return "bubblewrap (bwrap) is not installed: run `make prereqs` (or on Debian or Ubuntu `sudo apt-get install bubblewrap`)"
    try:
        run = subprocess.run([path, *base_arguments(), "--", sys.executable, "-I", "-c", "pass"],
                             capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bwrap could not run: {error}"
    if run.returncode != 0:
        detail = run.stderr.decode(errors="replace").strip().splitlines()
        return (f"bwrap cannot create a sandbox here ({detail[-1] if detail else 'exit ' + str(run.returncode)}); "
                f"unprivileged user namespaces may be disabled (kernel.unprivileged_userns_clone, "
                f"or AppArmor's restrict_unprivileged_userns)")
    return ""


def _python_roots() -> list[Path]:
    import course

    roots = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix),
             Path(os.path.realpath(sys.executable)).parent.parent, Path(course.__file__).resolve().parent}
    for entry in sys.path:  # site-packages and editable installs that live elsewhere
        if entry and "site-packages" in entry and Path(entry).is_dir():
            roots.add(Path(entry))
    data = Path(course.__file__).resolve().parent.parent / "data"
    if data.is_dir():
        roots.add(data)
    kept: list[Path] = []
    for root in sorted(roots, key=lambda p: len(p.parts)):
        if root.exists() and not any(root.is_relative_to(k) for k in kept) and root != Path("/"):
            kept.append(root)
    return kept


def kernel_paths() -> list[Path]:
    """Folders from ``COURSE_GRADE_KERNEL_PATH``, put on the kernel's ``sys.path`` (read-only)."""
    value = os.environ.get(KERNEL_PATH_VARIABLE, "")
    return [Path(p).resolve() for p in value.split(os.pathsep) if p.strip() and Path(p).is_dir()]


def base_arguments() -> list[str]:
    """The bwrap options every sandbox shares: namespaces, user, and the read-only environment."""
    arguments = ["--unshare-all", "--die-with-parent", "--new-session", "--uid", str(NOBODY),
                 "--gid", str(NOBODY), "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
                 "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    for name in ("lib", "lib64", "lib32", "libx32", "bin", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            arguments += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            arguments += ["--ro-bind", str(path), str(path)]
    for name in ("ssl", "ca-certificates", "ld.so.cache", "localtime", "alternatives", "nsswitch.conf"):
        path = Path("/etc") / name
        if path.exists():
            arguments += ["--ro-bind", str(path), str(path)]
    for root in _python_roots() + kernel_paths():
        arguments += ["--ro-bind", str(root), str(root)]
    package, _ = learner_package()
    if package:  # the learner's view of the package, over the instructor's: no hidden check to read
        import course

        arguments += ["--ro-bind", package, str(Path(course.__file__).resolve().parent)]
    return arguments


@functools.lru_cache(maxsize=1)
def learner_package() -> tuple[str, str]:
    """``(folder, "")``: the package with hidden checks withheld, or ``("", why not)``.

    Bound over the course package inside every sandbox (see :func:`course.handout.build.learner_package`).
    Made once per version of the course and kept (:mod:`course.grading.package_cache`); when the
    cache folder cannot be written, made for this process in a temporary folder.
    """
    from course.grading.package_cache import cached_learner_package
    from course.handout.build import HandoutError

    try:
        return str(cached_learner_package()), ""
    except HandoutError as error:
        return "", f"{type(error).__name__}: {error}"
    except OSError:
        pass
    import atexit
    import tempfile

    try:
        from course.handout.build import learner_package as make

        folder = tempfile.mkdtemp(prefix="course-learner-package-")
        atexit.register(shutil.rmtree, folder, True)
        return str(make(Path(folder))), ""
    except Exception as error:  # noqa: BLE001 - grading goes on with the full package, and says so
        return "", f"{type(error).__name__}: {error}"


def sandboxed(command: list[str], work: Path, sockets: Path, env: dict[str, str]) -> list[str]:
    """``command`` wrapped in bwrap: ``work`` is the writable working folder, ``sockets`` the socket folder."""
    arguments = [bwrap_path() or BWRAP, *base_arguments(),
                 "--bind", str(work), str(work), "--bind", str(sockets), str(sockets),
                 "--chdir", str(work), "--clearenv"]
    for key, value in sorted(env.items()):
        arguments += ["--setenv", key, value]
    return [*arguments, "--", *command]
