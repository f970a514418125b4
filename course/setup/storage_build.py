"""WiredTiger for lesson 04: built from source once per machine, with its progress shown, or in the background.

PyPI has only the source of the ``wiredtiger`` bindings (the ``storage`` extra of pyproject.toml), so they
are compiled (swig and a C compiler; 2 to 12 minutes).  ``make venv`` runs this module after installing the
course::

    python -m course.setup.storage_build               # build (or reuse) and install it now, elapsed time ticking
    python -m course.setup.storage_build --background  # the same, detached: make lab starts JupyterLab meanwhile

The wheel built is kept in the course's wheel cache (``~/.cache/course/wheels``, or ``$COURSE_CACHE_DIR``,
or ``$XDG_CACHE_HOME/course``), so a second clone on the same machine installs it in seconds, even when
pip's own cache is off (``PIP_NO_CACHE_DIR``).  The state of the build (building since when, built, failed)
is kept beside the virtual environment, for lesson 04's storage cell (:func:`not_ready_reason`, through
:func:`course.toolkit.storage_costs.available`) and ``course doctor`` (:func:`describe`).
"""

from __future__ import annotations

import argparse
import importlib.metadata as metadata
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: course/setup/ is two levels down
FALLBACK_REQUIREMENT = "wiredtiger>=11.3"
TICK_SECONDS = 30  #: a line of progress this often when the output is not a terminal (CI logs, make | tee)


def _beside_venv(suffix: str) -> Path:
    return Path(sys.prefix) / f"course-wiredtiger.{suffix}"


def status_file() -> Path:
    """Where the state of this environment's build is kept (JSON)."""
    return _beside_venv("json")


def log_file() -> Path:
    """The build's log: pip's own output, compiler steps included."""
    return _beside_venv("log")


def lock_file() -> Path:
    """The file a running build holds a lock on (so two builds never run at once)."""
    return _beside_venv("lock")


def requirement() -> str:
    """The ``storage`` extra's requirement from pyproject.toml (``wiredtiger>=11.3``)."""
    try:
        text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return FALLBACK_REQUIREMENT
    found = re.search(r'^storage\s*=\s*\["([^"]+)"\]', text, re.M)
    return found.group(1) if found else FALLBACK_REQUIREMENT


def wheel_cache() -> Path:
    """The course's cache of built wheels, shared by every clone of this user on this machine."""
    base = os.environ.get("COURSE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "course")
    return Path(base) / "wheels"


def cached_wheels() -> list[Path]:
    """The wiredtiger wheels in the course's cache built for this interpreter (``cp313``), oldest first."""
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    folder = wheel_cache()
    return sorted(folder.glob(f"wiredtiger-*-{tag}-{tag}-*.whl")) if folder.is_dir() else []


def installed_version() -> str | None:
    """The installed wiredtiger's version, or None."""
    try:
        return metadata.version("wiredtiger")
    except metadata.PackageNotFoundError:
        return None


def missing_tools() -> list[str]:
    """The build's system prerequisites that are missing here (swig, a C compiler)."""
    from course.setup.prereqs import needed

    return [p.name for p in needed("venv") if not p.found()]


def _read_status() -> dict:
    try:
        return json.loads(status_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _write_status(**fields: object) -> None:
    """Replace the status file, whole (a reader never sees half of it)."""
    path = status_file()
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        partial.write_text(json.dumps({"requirement": requirement(), "python": sys.version.split()[0], **fields}),
                           encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass  # a read-only environment: nothing to record


def building_seconds() -> int | None:
    """Seconds since the build now running started, or None when none is running."""
    import fcntl

    try:
        handle = os.open(lock_file(), os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        started = _read_status().get("started")
        return int(time.time() - started) if isinstance(started, (int, float)) else 0
    finally:
        os.close(handle)
    return None


def _failed_here() -> bool:
    """True when the last build of this requirement on this Python failed."""
    status = _read_status()
    return status.get("state") == "failed" and status.get("requirement") == requirement() \
        and status.get("python") == sys.version.split()[0]


def not_ready_reason() -> str:
    """Why the wiredtiger bindings are not importable here, in plain words, with what to do."""
    seconds = building_seconds()
    if seconds is not None:
        return (f"WiredTiger is still being built ({seconds} s so far; make lab started it in the background): "
                f"run this cell again in a few minutes to measure on it. Meanwhile, the seed's figures")
    if _failed_here():
        return (f"the WiredTiger build failed (its log: {log_file()}); `make venv` builds it again in the "
                f"foreground, showing why")
    tools = missing_tools()
    if tools:
        return (f"{' and '.join(tools)} {'is' if len(tools) == 1 else 'are'} needed to build it: `make prereqs` "
                f"installs them, then `make lab` builds WiredTiger (a few minutes, once per machine)")
    return ("the wiredtiger package is not installed: `make venv` builds it (a few minutes, once per machine; "
            "it needs a C compiler and swig)")


def describe() -> str:
    """One line for ``course doctor``: WiredTiger's version, or why it is not here and what that costs."""
    version = installed_version()
    if version:
        return f"{version} (lesson 04 measures its storage figures on it)"
    return f"not installed: lesson 04 shows the seed's storage figures, labelled. {not_ready_reason()}"


def _pip(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "pip", *arguments]


def _commands() -> list[list[str]]:
    """Build (or find) the wheel in the course's cache, then install from there."""
    cache = str(wheel_cache())
    return [_pip("wheel", "--no-deps", "--prefer-binary", "--find-links", cache, "--wheel-dir", cache, "-v",
                 requirement()),
            _pip("install", "--prefer-binary", "--find-links", cache, requirement())]


def _latest_step(log: Path) -> str:
    """The compiler's last "[n/m]" step in the log, as " (step n/m)", or ""."""
    try:
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - 8192))
            tail = handle.read().decode(errors="replace")
    except OSError:
        return ""
    steps = re.findall(r"\[(\d+)/(\d+)\]", tail)
    return f" (compiling: step {steps[-1][0]} of {steps[-1][1]})" if steps else ""


def _run_with_progress(commands: list[list[str]], log: Path, show: bool) -> bool:
    """Run ``commands`` one after another, their output into ``log``; while they run, show the time elapsed
    (every second on a terminal, every :data:`TICK_SECONDS` otherwise) when ``show``.  True if all succeed."""
    start = time.monotonic()
    terminal = show and sys.stdout.isatty()
    last_line = 0.0
    with log.open("ab") as output:
        for command in commands:
            output.write(f"\n$ {' '.join(command)}\n".encode())
            output.flush()
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       cwd=ROOT)
            while process.poll() is None:
                time.sleep(1)
                elapsed = time.monotonic() - start
                if terminal:
                    print(f"\r  building WiredTiger: {int(elapsed)} s so far{_latest_step(log)}   ", end="",
                          flush=True)
                elif show and elapsed - last_line >= TICK_SECONDS:
                    last_line = elapsed
                    print(f"  building WiredTiger: {int(elapsed)} s so far{_latest_step(log)}", flush=True)
            if terminal:
                print()
            if process.returncode != 0:
                return False
    return True


def build(show: bool = True) -> int:
    """Build and install wiredtiger now, holding the lock (waiting for a build already running); 0 when it is
    installed at the end, else 1 (after saying why)."""
    import fcntl

    lock = open(lock_file(), "a")
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            if show:
                print(f"WiredTiger is being built by another process ({building_seconds() or 0} s so far): "
                      f"waiting for it (log: {log_file()})", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        if installed_version():
            if show:
                print(f"WiredTiger {installed_version()} is installed")
            return 0
        started = time.time()
        _write_status(state="building", started=started, pid=os.getpid())
        wheel_cache().mkdir(parents=True, exist_ok=True)
        log = log_file()
        log.write_text(f"building {requirement()} for Python {sys.version.split()[0]}, wheels kept in "
                       f"{wheel_cache()}\n")
        if show and cached_wheels():
            print(f"Installing WiredTiger for lesson 04 from the course's wheel cache ({cached_wheels()[-1]})",
                  flush=True)
        elif show:
            print(f"Building WiredTiger for lesson 04 ({requirement()}: a few minutes, once per machine; "
                  f"the wheel is kept in {wheel_cache()}; log: {log})", flush=True)
        ok = _run_with_progress(_commands(), log, show) and bool(installed_version())
        seconds = int(time.time() - started)
        _write_status(state="built" if ok else "failed", started=started, seconds=seconds)
        if ok:
            print(f"WiredTiger {installed_version()} installed in {seconds} s", flush=True)
            return 0
        if show:
            tail = log.read_text(errors="replace").splitlines()[-15:]
            print("\n".join(["the WiredTiger build failed; the end of its log:", *tail]), flush=True)
            print(f"note: lesson 04 will show the seed's storage figures instead (full log: {log})")
        return 1
    finally:
        lock.close()


def start(background: bool) -> int:
    """What ``make venv`` runs: nothing when WiredTiger is installed; a note when it cannot be built; else the
    build, in the foreground or (``background``) detached, with a line saying where it stands."""
    version = installed_version()
    if version:
        print(f"WiredTiger {version} is installed (lesson 04's storage figures)")
        return 0
    tools = missing_tools()
    if tools:
        print(f"note: WiredTiger is not built: it needs {' and '.join(tools)} (make prereqs installs them). "
              f"Lesson 04 shows the seed's storage figures, labelled as such.")
        return 0
    if not background:
        return build(show=True)
    seconds = building_seconds()
    if seconds is not None:
        print(f"WiredTiger is being built in the background ({seconds} s so far; log: {log_file()})")
        return 0
    if _failed_here():
        print(f"note: the last WiredTiger build failed (log: {log_file()}); lesson 04 shows the seed's figures. "
              f"`make venv` builds it again in the foreground, showing why.")
        return 0
    _write_status(state="building", started=time.time())  # the build itself rewrites it, with its pid
    with open(os.devnull, "rb") as nothing, log_file().open("ab") as output:
        subprocess.Popen([sys.executable, "-m", "course.setup.storage_build", "--detached"], cwd=ROOT,
                         stdin=nothing, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    print(f"Building WiredTiger in the background for lesson 04 (a few minutes, once per machine; log: "
          f"{log_file()}). Lesson 04's storage cell says how far it has got, and measures on it once it is "
          f"built (`make doctor` shows it too).")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m course.setup.storage_build", description=__doc__.splitlines()[0])
    parser.add_argument("--background", action="store_true", help="build detached from this process")
    parser.add_argument("--detached", action="store_true", help=argparse.SUPPRESS)  # the background build itself
    args = parser.parse_args(argv)
    if args.detached:
        os.nice(10)  # JupyterLab and the learner's kernels come first
        return build(show=False)
    return start(args.background)


if __name__ == "__main__":
    sys.exit(main())
