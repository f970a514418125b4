"""The system packages the course needs: one list, what each serves, and how to install it, everywhere.

``make prereqs``, every make target that builds ``.venv`` (``lab``, ``test``, ``e2e``...), ``.ci/run`` and
``course doctor`` all read :data:`PREREQUISITES`.  Run as a file, with whatever ``python3`` the machine has,
before ``.venv`` exists (standard library only, Python 3.8 or later)::

    python3 course/setup/prereqs.py --for test      # install what make test needs, or say how; exit 1 if it must stop
    python3 course/setup/prereqs.py --for lab --check   # only look: never install

For each prerequisite a target needs and the machine lacks, it installs the packages with ``apt-get`` when it
is root, or through ``sudo -n`` when that needs no password; otherwise (or with ``--check``, or
``COURSE_PREREQS=check``) it prints the one command to run on this platform and what is lost without it.
It exits 1 when something the target cannot go without is still missing (bubblewrap for ``make test``: its
containment tests would prove nothing), else 0.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

TARGETS = ("lab", "test", "e2e", "venv", "ci", "all")
CHECK_ONLY_VARIABLE = "COURSE_PREREQS"  #: ``COURSE_PREREQS=check``: look, never install


def _python_has_venv() -> bool:
    """True when the ``python3`` on PATH can make a virtual environment (Debian splits off ``ensurepip``)."""
    python = shutil.which("python3")
    if python is None:
        return False
    return subprocess.run([python, "-c", "import ensurepip, venv"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def _chromium() -> Optional[str]:
    """The Chromium the browser test would use (as tests/e2e/conftest.py looks for it), if any."""
    for candidate in (os.environ.get("E2E_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass(frozen=True)
class Prerequisite:
    """One system prerequisite: what shows it is there, what it serves, and its packages per platform."""

    name: str
    serves: str  #: what the course uses it for
    lost: str  #: what is lost without it
    needed_by: Tuple[str, ...]  #: targets that install it when they can
    required_by: Tuple[str, ...]  #: targets that stop without it
    commands: Tuple[str, ...] = ()  #: executables that show it is installed (any one)
    #: platform -> packages ("debian", "fedora", "arch", "suse", "macos"); a missing platform has none
    packages: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    recommends: bool = False  #: apt-get installs it with its recommended packages (Chromium's fonts)
    probe: Optional[Callable[[], object]] = None  #: instead of ``commands``: a truthy result means present
    elsewhere: str = ""  #: what to do on a platform without a package

    def found(self) -> str:
        """Where it is (a path, or "yes"), or "" when it is missing."""
        if self.probe is not None:
            result = self.probe()
            return result if isinstance(result, str) else ("yes" if result else "")
        for command in self.commands:
            path = shutil.which(command)
            if path:
                return path
        return ""


def _same(*names: str) -> Dict[str, Tuple[str, ...]]:
    return {platform: names for platform in ("debian", "fedora", "arch", "suse", "macos")}


PREREQUISITES: Tuple[Prerequisite, ...] = (
    Prerequisite(
        "bubblewrap", "the grader's sandbox: `course grade` runs each learner's kernel in it, and make test's "
        "containment tests prove it holds",
        "`course grade` refuses to grade untrusted notebooks (or grades them unsandboxed with --unsandboxed), "
        "and make test stops: without it its containment tests would prove nothing (learners do not need it)",
        needed_by=("lab", "test", "ci"), required_by=("test", "ci"), commands=("bwrap",),
        packages={p: ("bubblewrap",) for p in ("debian", "fedora", "arch", "suse")},
        elsewhere="the sandbox needs Linux: grade on a Linux machine (learners do not need it)"),
    Prerequisite(
        "swig", "building WiredTiger (MongoDB's storage engine) for lesson 04's storage figures",
        "lesson 04 shows the seed's storage figures (measured on a MongoDB 8.3.11 server, labelled as such) "
        "instead of measuring its own, and the tests of those measurements are skipped",
        needed_by=("lab", "test", "venv", "ci"), required_by=("ci",), commands=("swig",), packages=_same("swig")),
    Prerequisite(
        "C compiler", "building WiredTiger (with swig) for lesson 04's storage figures",
        "the same as without swig: lesson 04 shows the seed's storage figures",
        needed_by=("lab", "test", "venv", "ci"), required_by=("ci",), commands=("cc", "gcc"),
        packages={p: ("gcc",) for p in ("debian", "fedora", "arch", "suse")},
        elsewhere="install Xcode's command-line tools: xcode-select --install"),
    Prerequisite(
        "chromium", "the browser test (make e2e): every lab and solution run in JupyterLab in Chromium",
        "make e2e stops (its test would be skipped), and CI's browser test is skipped, saying so",
        needed_by=("e2e", "ci"), required_by=("e2e",), probe=_chromium, recommends=True,
        packages={"debian": ("chromium",), "fedora": ("chromium",), "arch": ("chromium",),
                  "suse": ("chromium",), "macos": ("--cask", "chromium")}),
    Prerequisite(
        "make", "make lab, make test and the other make targets (CI runs them)",
        "none of the make targets runs", needed_by=("ci",), required_by=("ci",), commands=("make",),
        packages={p: ("make",) for p in ("debian", "fedora", "arch", "suse")},
        elsewhere="install Xcode's command-line tools: xcode-select --install"),
    Prerequisite(
        "timeout", "CI's time limit per phase (coreutils' timeout)", "CI cannot limit a hung phase",
        needed_by=("ci",), required_by=("ci",), commands=("timeout",), packages=_same("coreutils")),
    Prerequisite(
        "slurm", "the Slurm tests of `course grade --slurm` (make test starts a single-node cluster on loopback: "
        "slurmctld and slurmd)",
        "the Slurm tests fail (make test): `course grade --slurm` is not tested against a real Slurm",
        needed_by=("test", "ci"), required_by=(), commands=("slurmctld",),
        packages={"debian": ("slurm-wlm",), "fedora": ("slurm-slurmctld", "slurm-slurmd"), "arch": ("slurm-llnl",),
                  "suse": ("slurm",)},
        elsewhere="Slurm needs Linux: the Slurm tests run on a Linux machine"),
    Prerequisite(
        "munge", "Slurm's authentication, for the single-node cluster of the Slurm tests",
        "the Slurm tests fail (make test): Slurm's daemons cannot start without it",
        needed_by=("test", "ci"), required_by=(), commands=("munged",),
        packages={p: ("munge",) for p in ("debian", "fedora", "arch", "suse")},
        elsewhere="Slurm needs Linux: the Slurm tests run on a Linux machine"),
    Prerequisite(
        "python3-venv", "virtual environments made from the python3 on PATH (CI's Python 3.11 lane; .venv "
        "when no Python 3.13 is found)",
        "`python3 -m venv` fails: CI's 3.11 lane cannot run, and neither can make lab without a Python 3.13",
        needed_by=("ci",), required_by=("ci",), probe=_python_has_venv, packages={"debian": ("python3-venv",)},
        elsewhere="install a Python that includes venv and ensurepip (python.org's, pyenv's, Homebrew's)"),
)


def needed(target: str) -> List[Prerequisite]:
    """The prerequisites ``target`` installs when it can ("all": every one)."""
    return [p for p in PREREQUISITES if target == "all" or target in p.needed_by]


def platform_name() -> str:
    """"debian", "fedora", "arch", "suse", "macos", or "other" (from ``/etc/os-release`` on Linux)."""
    if sys.platform == "darwin":
        return "macos"
    if not sys.platform.startswith("linux"):
        return "other"
    words = set()
    try:
        with open("/etc/os-release", encoding="utf-8") as release:
            for line in release:
                key, _, value = line.strip().partition("=")
                if key in ("ID", "ID_LIKE"):
                    words |= set(value.strip('"').lower().split())
    except OSError:
        pass
    for name, family in (("debian", {"debian", "ubuntu"}), ("fedora", {"fedora", "rhel", "centos"}),
                         ("arch", {"arch"}), ("suse", {"suse", "opensuse", "sles"})):
        if words & family:
            return name
    return "other"


_MANAGERS = {
    "debian": ["apt-get", "install", "-y"], "fedora": ["dnf", "install", "-y"],
    "arch": ["pacman", "-S", "--needed"], "suse": ["zypper", "install"], "macos": ["brew", "install"],
}


def install_command(missing: Sequence[Prerequisite], platform: str, root: bool) -> Tuple[str, List[str]]:
    """(the one command that installs ``missing`` on ``platform``, or "" when there is none; what to do for
    those without a package there)."""
    packages: List[str] = []
    advice = []
    for prerequisite in missing:
        names = prerequisite.packages.get(platform)
        if names:
            packages += [n for n in names if n not in packages or n.startswith("-")]
        else:
            advice.append(f"{prerequisite.name}: {prerequisite.elsewhere or 'no package known for this platform'}")
    if not packages or platform not in _MANAGERS:
        return "", advice
    if platform == "macos" and "--cask" in packages:  # brew installs casks on their own
        casks = [packages[i + 1] for i, n in enumerate(packages) if n == "--cask"]
        plain = [n for n in packages if n != "--cask" and n not in casks]
        commands = ([" ".join(["brew", "install", *plain])] if plain else []) + \
            [" ".join(["brew", "install", "--cask", *casks])]
        return " && ".join(commands), advice
    sudo = [] if root or platform == "macos" else ["sudo"]
    return " ".join(sudo + _MANAGERS[platform] + packages), advice


def _privilege() -> Optional[List[str]]:
    """The prefix that runs apt-get as root here: [] as root, ["sudo", "-n"] when sudo needs no password,
    else None."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL).returncode == 0:
        return ["sudo", "-n"]
    return None


def _apt_install(prefix: List[str], missing: List[Prerequisite], updated: List[bool]) -> bool:
    """apt-get install the Debian packages of ``missing`` (apt-get update first, once); True on success."""
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    if not updated:
        print("prerequisites: apt-get update", flush=True)
        subprocess.run(prefix + ["apt-get", "update", "-qq"], env=env)
        updated.append(True)
    packages = [n for p in missing for n in p.packages.get("debian", ())]
    recommends = [] if any(p.recommends for p in missing) else ["--no-install-recommends"]
    print(f"prerequisites: apt-get install {' '.join(packages)}", flush=True)
    return subprocess.run(prefix + ["apt-get", "install", "-y", "-qq", *recommends, *packages],
                          env=env, stdout=subprocess.DEVNULL).returncode == 0


def install(missing: List[Prerequisite]) -> None:
    """Install ``missing`` with apt-get, as root or through ``sudo -n``, when this machine allows it."""
    prefix = _privilege()
    if prefix is None or platform_name() != "debian" or not shutil.which("apt-get"):
        return
    updated: List[bool] = []
    plain = [p for p in missing if p.packages.get("debian") and not p.recommends]
    for group in (plain, [p for p in missing if p.packages.get("debian") and p.recommends]):
        if group and not _apt_install(prefix, group, updated):
            print(f"prerequisites: apt-get could not install {', '.join(p.name for p in group)}", flush=True)


def describe_missing(missing: Sequence[Prerequisite], platform: str, root: bool) -> List[str]:
    """Lines saying what each missing prerequisite serves, what is lost without it, and how to install it."""
    lines = []
    for prerequisite in missing:
        lines.append(f"  {prerequisite.name}: {prerequisite.serves}.")
        lines.append(f"    Without it: {prerequisite.lost}.")
    command, advice = install_command(missing, platform, root)
    if command:
        lines.append(f"  Install {'it' if len(missing) == 1 else 'them'} with:  {command}")
    lines += [f"  {line}" for line in advice]
    return lines


def run(target: str, check_only: bool) -> int:
    """Install (unless ``check_only``) what ``target`` needs, report what is still missing; the exit code."""
    wanted = needed(target)
    missing = [p for p in wanted if not p.found()]
    if missing and not check_only:
        install(missing)
        missing = [p for p in missing if not p.found()]
    label = f"make {target}" if target not in ("ci", "all") else ("CI" if target == "ci" else "the course")
    if not missing:
        print(f"prerequisites for {label}: all present ({', '.join(p.name for p in wanted)})")
        return 0
    platform, root = platform_name(), os.geteuid() == 0
    stopping = [p for p in missing if target in p.required_by]
    print(f"prerequisites for {label}: {' and '.join(p.name for p in missing)} "
          f"{'is' if len(missing) == 1 else 'are'} missing"
          + (" (not installed: --check)" if check_only else "") + ".")
    for line in describe_missing(missing, platform, root):
        print(line)
    if not stopping:
        if target != "all":
            print(f"  {label} goes on without {'it' if len(missing) == 1 else 'them'}.")
        return 0
    names = " and ".join(p.name for p in stopping)
    print(f"{label} stops here: {names} {'is' if len(stopping) == 1 else 'are'} missing: run make prereqs "
          f"(as root, or with sudo), or the command above.", file=sys.stderr)
    return 1


def main(argv: Optional[List[str]] = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python3 course/setup/prereqs.py",
                                     description="Install the system packages a make target needs, or say how.")
    parser.add_argument("--for", dest="target", choices=TARGETS, default="all",
                        help="the make target (ci: everything .ci/run needs; default: all)")
    parser.add_argument("--check", action="store_true",
                        help=f"only look, never install (also {CHECK_ONLY_VARIABLE}=check)")
    args = parser.parse_args(argv)
    check_only = args.check or os.environ.get(CHECK_ONLY_VARIABLE, "").strip().lower() == "check"
    return run(args.target, check_only)


if __name__ == "__main__":
    sys.exit(main())
