"""A hostile class for ``course grade``: learners who attack the grader, its other learners and its secrets.

Every attacker starts from the blank lab 99 (``total = ____`` ...), so any point it scores was stolen.
Most attacks also *report* whether they got through, the only way a sandboxed kernel can: the answer
cell of 99.3 becomes ``name = "mongo" if ESCAPED else "nope"``, so 99.3 is correct exactly when the
attack reached something it must not reach.  The victims (a correct and a wrong learner) are graded in
the same run, two at a time, and must keep the golden class's grades; :func:`write_interleaved_class` puts
every attack between two honest learners instead, for a run at one job.

:data:`DB_ATTACKS` do the same on lab 98, whose checks hand a collection to the learner's function:
their ``count_kitchen`` misbehaves on the checks' database while a victim is graded beside them.
The attacks of issue 27 on the relay, the engine, the feedback and the package cache are in
:mod:`support.relay_attacks` (graded by tests/test_grading_relay_attacks.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from support import fake_lesson, golden_class
from support.fake_lesson import code
from support.interleaving import honest_name, interleaved

ORPHAN_MARKER = "HOSTILE_ORPHAN_7d1c"  #: in the command line of the process that tries to outlive its kernel
FLAG = 'name = "mongo" if ESCAPED else "nope"'


def _attack(setup: str, flag: bool = True, **answers: str) -> tuple[str, bool, dict[str, str]]:
    return setup, flag, answers


def attacks(class_folder: Path, out: Path, host_port: int,
            victim_folder: str = "alice") -> dict[str, tuple[str, bool, dict[str, str]]]:
    """learner -> (cell inserted before the first answer cell, whether 99.3 reports ``ESCAPED``,
    answer cell sources by exercise: ``total`` (99.1), ``double`` (99.2), ``name`` (99.3)); the attacks on
    another learner's submission aim at ``class_folder/victim_folder``."""
    victim = class_folder / victim_folder / golden_class.NAME
    escape = out.parent / "escaped.txt"
    return {
        # hooks that used to forge verdicts from a blank notebook
        "input_transformer": _attack(
            "from IPython.display import display\n"
            "def _rewrite(lines):\n"
            "    if any('course.grading' in line for line in lines):\n"
            "        display({'application/vnd.course.result+json': {'exercise_id': '99.1', 'status': 'correct',"
            " 'score': 5, 'max_score': 5}}, raw=True)\n"
            "        return lines  # the grader's own request runs on, with ____ still in every answer\n"
            "    return lines\n"
            "get_ipython().input_transformers_post.append(_rewrite)\nESCAPED = False", flag=False),
        "session_send": _attack(
            "kernel = get_ipython().kernel\nsession = kernel.session\n_send = session.send\n"
            "def send(stream, msg, *args, **kwargs):\n"
            "    content = msg.get('content') if isinstance(msg, dict) else None\n"
            "    if isinstance(content, dict) and content.get('status') == 'error':\n"
            "        content['status'] = 'ok'\n"
            "    return _send(stream, msg, *args, **kwargs)\n"
            "session.send = send\nESCAPED = False", flag=False),
        "display_hook": _attack(
            "ip = get_ipython()\nhook = getattr(ip.display_pub, 'register' + '_hook')\n"
            "hook(lambda msg: {**msg, 'content': {'data': {'text/plain': '[99.1] Correct'}, 'metadata': {}}})\n"
            "ESCAPED = False", flag=False),
        "compile_hook": _attack(
            "import builtins\n_compile = builtins.compile\n"
            "def compile(source, *args, **kwargs):\n"
            "    if 'course' in str(source)[:400]:\n"
            "        source = \"print('[99.1] Correct: 5/5')\"  # a forged verdict instead of the grader's request\n"
            "    return _compile(source, *args, **kwargs)\n"
            "builtins.compile = compile\nESCAPED = False", flag=False),
        "always_equal": _attack(
            "class Yes(int):\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
            "    __hash__ = int.__hash__\n"
            "class Anything:\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n"
            "ESCAPED = False", flag=False, total="total = Yes(7)", double="double = lambda x: Anything()",
            name="name = Anything()"),
        "recording_answer": _attack(
            "SEEN = []\nclass Spy:\n"
            "    def __eq__(self, other): SEEN.append(other); return False\n"
            "    def __ne__(self, other): SEEN.append(other); return True\n"
            "    def __lt__(self, other): SEEN.append(other); return False\n"
            "    def __hash__(self): return 1\n"
            "    def __index__(self): SEEN.append('index'); return 0\n"
            "spy = Spy()", total="total = spy", double="double = lambda x: spy",
            name="ESCAPED = bool(SEEN)\n" + FLAG),
        # the learner's folder, other learners and the grader's files
        "launcher_file": _attack("import os\nESCAPED = os.environ.get('HIJACKED') == '1'"),
        "outliving_process": _attack(
            "import subprocess, sys\n"
            f"script = '''import os, time\\nfor _ in range(80):\\n    time.sleep(0.25)\\n    try:\\n"
            f"        open({str(escape)!r}, 'w').write('orphan')\\n    except OSError:\\n        pass\\n"
            f"    for pid in os.listdir('/proc'):\\n        try:\\n"
            f"            line = open('/proc/' + pid + '/cmdline', 'rb').read()\\n        except OSError:\\n"
            f"            continue\\n        if b'--out' in line:\\n"
            f"            open('/tmp/found-out', 'wb').write(line)\\n'''\n"
            f"subprocess.Popen([sys.executable, '-c', script, {ORPHAN_MARKER!r}], start_new_session=True,\n"
            "                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "ESCAPED = False"),
        "connection_files": _attack(
            "import glob, json, os, ipykernel\nown = os.path.realpath(ipykernel.get_connection_file())\nfound = []\n"
            "for pattern in ('/tmp/**/*.json', '/root/.local/share/jupyter/runtime/*.json',\n"
            "                '/run/user/*/jupyter/**/*.json', os.path.expanduser('~/**/*.json')):\n"
            "    for path in glob.glob(pattern, recursive=True):\n"
            "        try:\n            info = json.load(open(path))\n        except Exception:\n            continue\n"
            "        if isinstance(info, dict) and 'key' in info and os.path.realpath(path) != own:\n"
            "            found.append(path)\n"
            "for pid in os.listdir('/proc'):\n"
            "    try:\n        line = open(f'/proc/{pid}/cmdline', 'rb').read()\n    except OSError:\n        continue\n"
            "    if b'kernel' in line and os.path.realpath(own).encode() not in line and b'-f' in line:\n"
            "        found.append(pid)\n"
            "ESCAPED = bool(found)"),
        "package_edit": _attack(
            "import os, course.engine.exercise, support.fake_lesson\nESCAPED = False\n"
            "for path in (course.engine.exercise.__file__, support.fake_lesson.__file__):\n"
            "    try:\n        open(path, 'r+b').close()\n        ESCAPED = True\n    except OSError:\n        pass\n"
            "ESCAPED = ESCAPED or os.access(os.path.dirname(course.engine.exercise.__file__), os.W_OK)"),
        "other_submission": _attack(
            "import os\nown = os.getcwd()\nESCAPED = False\n"
            f"for target in ({str(victim)!r}, {str(class_folder)!r}, {str(out)!r}):\n"
            "    ESCAPED = ESCAPED or os.path.exists(target)\n"
            "for top in ('/tmp', '/work', '/root', '/home'):\n"
            "    for folder, _, files in os.walk(top):\n"
            "        if folder != own and any(f.endswith('.ipynb') for f in files):\n"
            "            ESCAPED = True"),
        "secret_tests": _attack(
            f"import os\nneedle = ({golden_class.SENTINEL[:7]!r} + {golden_class.SENTINEL[7:]!r}).encode()\n"
            "ESCAPED = False\n"
            "for pid in os.listdir('/proc'):\n"
            "    for part in ('cmdline', 'environ'):\n"
            "        try:\n            ESCAPED = ESCAPED or needle in open(f'/proc/{pid}/{part}', 'rb').read()\n"
            "        except OSError:\n            pass\n"
            "    try:\n        fds = os.listdir(f'/proc/{pid}/fd')\n    except OSError:\n        fds = []\n"
            "    for fd in fds:\n"
            "        try:\n            ESCAPED = ESCAPED or 'secret' in os.readlink(f'/proc/{pid}/fd/{fd}')\n"
            "        except OSError:\n            pass\n"
            "for top in ('/tmp', '/work', '/root'):\n"
            "    for folder, _, files in os.walk(top):\n"
            "        for f in files:\n"
            "            try:\n"
            "                ESCAPED = ESCAPED or needle in open(os.path.join(folder, f), 'rb').read(1 << 20)\n"
            "            except OSError:\n                pass\n"
            "ESCAPED = ESCAPED or any(needle.decode() in str(cell) for cell in In + list(Out.values()))"),
        "raise_limits": _attack(
            "import resource\nESCAPED = False\n"
            "for which in (resource.RLIMIT_AS, resource.RLIMIT_CPU, resource.RLIMIT_NPROC):\n"
            "    soft, hard = resource.getrlimit(which)\n"
            "    try:\n        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
            "        ESCAPED = True\n    except (ValueError, OSError):\n        pass\n"
            "    ESCAPED = ESCAPED or hard == resource.RLIM_INFINITY"),
        "hidden_checks_source": _attack(  # the course package in the sandbox is the learners' copy
            "import inspect, course.lessons.lesson01 as lesson\n"
            "ESCAPED = 'hidden checks run only when' not in inspect.getsource(lesson)"),
        # our own
        "network": _attack(  # the host's listener counts who reached it (the sandbox has its own loopback)
            "import socket\nESCAPED = False\n"
            f"for host in ('127.0.0.1', '::1', '8.8.8.8', socket.gethostname()):\n"
            "    try:\n"
            f"        socket.create_connection((host, {host_port}), timeout=1).close()\n"
            "    except OSError:\n        pass", flag=False),
        "agent_impersonation": _attack(
            "import glob, os, socket, threading, time, ipykernel\n"
            "folder = os.path.dirname(ipykernel.get_connection_file())\n"
            "def pester():\n"
            "    for _ in range(200):\n"
            "        for name in ('agent.sock', 'db.sock'):\n"
            "            try:\n"
            "                s = socket.socket(socket.AF_UNIX)\n                s.connect(os.path.join(folder, name))\n"
            "                s.sendall((2 ** 31 - 1).to_bytes(4, 'big') + b'\\x00' * 64)\n"
            "            except OSError:\n                pass\n"
            "        time.sleep(0.05)\n"
            "threading.Thread(target=pester, daemon=True).start()\n"
            "ESCAPED = False", flag=False),
        "fork_bomb": _attack(
            "import os, resource\nESCAPED = resource.getrlimit(resource.RLIMIT_NPROC)[1] == resource.RLIM_INFINITY\n"
            "children = []\n"
            "try:\n"
            "    for _ in range(400):\n"
            "        pid = os.fork()\n"
            "        if pid == 0:\n            import time; time.sleep(30); os._exit(0)\n"
            "        children.append(pid)\n"
            "except OSError:\n    pass\n"
            "ESCAPED = ESCAPED or len(children) >= 400"),
    }


LAUNCHER_FILE = '''import os, runpy, sys
os.environ["HIJACKED"] = "1"
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
del sys.modules["ipykernel_launcher"]
runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
'''


def write_class(root: Path, out: Path, host_port: int) -> tuple[Path, Path]:
    """The hostile class and its two victims under ``root``; return (class folder, secret tests folder)."""
    submissions, secret = _folders(root)
    for learner, nb in (("alice", golden_class.solution()), ("wanda", golden_class.solution())):
        if learner == "wanda":
            nb.cells[2].source = "total = 41"
        _write(submissions / learner, nb)
    for learner, attack in attacks(submissions, out, host_port).items():
        _write_attacker(submissions / learner, learner, attack)
    return submissions, secret


def write_interleaved_class(root: Path, out: Path, host_port: int) -> tuple[Path, Path, dict[str, str]]:
    """Every attack between two honest learners (alice's solution), in grading order at one job: honest,
    attacker, honest, ... honest.  Return (class folder, secret tests folder, folder -> its attack or
    ``"honest"``); the attacks on another learner's submission aim at the first honest learner's."""
    submissions, secret = _folders(root)
    every = attacks(submissions, out, host_port, victim_folder=honest_name(0))
    folders = interleaved(every)
    for folder, learner in folders.items():
        if learner == "honest":
            _write(submissions / folder, golden_class.solution())
        else:
            _write_attacker(submissions / folder, learner, every[learner])
    return submissions, secret, folders


def _folders(root: Path) -> tuple[Path, Path]:
    submissions, secret = root / "class", root / "secret"
    secret.mkdir(parents=True)
    (secret / "extra_checks.py").write_text(golden_class.SECRET_TESTS)
    return submissions, secret


def _write(folder: Path, nb) -> None:
    from course.handout.notebooks import write_notebook

    folder.mkdir(parents=True)
    write_notebook(nb, folder / golden_class.NAME)


def _write_attacker(folder: Path, learner: str, attack: tuple[str, bool, dict[str, str]]) -> None:
    setup, flag, answers = attack
    nb = golden_class.lab_notebook()
    nb.cells.insert(2, code(setup))
    if flag:
        nb.cells[6].source = FLAG
    for index, variable in ((3, "total"), (5, "double"), (6, "name")):
        if variable in answers:
            nb.cells[index].source = answers[variable]
    _write(folder, nb)
    if learner == "launcher_file":
        (folder / "ipykernel_launcher.py").write_text(LAUNCHER_FILE)


#: learners whose 99.3 answer reports whether their attack got through
FLAGGING = {learner for learner, (_, flag, _) in attacks(Path("/c"), Path("/o"), 1).items() if flag}
_BLANK = {"99.1": ("not_attempted", "0", "5"), "99.2": ("not_attempted", "0", "3")}


def expected(learner: str) -> dict[str, tuple[str, str, str]]:
    """What an honest learner with the same plain answers gets: a blank lab scores nothing."""
    if learner == "always_equal":  # 7 (an int, not 41, not 42); double returns an object equal to nothing
        return {"99.1": ("incorrect", "3", "5"), "99.2": ("incorrect", "0", "3"), "99.3": ("incorrect", "0", "1")}
    if learner == "recording_answer":  # an object: not an int, not 41, not 42
        return {"99.1": ("incorrect", "2", "5"), "99.2": ("incorrect", "0", "3"), "99.3": ("incorrect", "0", "1")}
    if learner == "compile_hook":  # its hook breaks every cell the grader sends: its own kernel, its own loss
        return {"99.1": ("error", "0", "5"), "99.2": ("error", "0", "3"), "99.3": ("error", "0", "1")}
    last = ("incorrect", "0", "1") if learner in FLAGGING else ("not_attempted", "0", "1")
    from course.grading import process_limit

    if learner == "fork_bomb" and not process_limit.enforced():  # root, and no pids cgroup to limit it
        last = ("correct", "1", "1")
    return {**_BLANK, "99.3": last}
VICTIMS = {"alice": golden_class.EXPECTED["alice"], "wanda": golden_class.EXPECTED["wanda"]}


# ---- lab 98: attacks through the collection a check hands over -------------------------------

DB_SOLUTION = "def count_kitchen(products):\n    return products.count_documents({'category': 'kitchen'})"

DB_ATTACKS = {
    "db_dropper": (
        "def count_kitchen(products):\n"
        "    client = products.database.client\n"
        "    for name in ('admin', 'course_98_scratch_g' + VICTIM_TAG, 'course_98_g' + VICTIM_TAG, 'other'):\n"
        "        try:\n            client.drop_database(name)\n        except Exception:\n            pass\n"
        "    try:\n        client.list_database_names()\n    except Exception:\n        pass\n"
        "    try:\n"
        "        client['course_98_scratch_g' + VICTIM_TAG].products.insert_one({'category': 'kitchen'})\n"
        "    except Exception:\n        pass\n"
        "    return products.count_documents({'category': 'kitchen'})"),
    "db_background": (
        "import threading, time\nSTARTED = []\n"
        "def count_kitchen(products):\n"
        "    other = products.database.client['course_98_scratch_g' + VICTIM_TAG].products\n"
        "    def meddle():\n"
        "        for _ in range(400):\n"
        "            for target in (products, other):\n"
        "                try:\n                    target.insert_one({'category': 'kitchen'})\n"
        "                except Exception:\n                    pass\n"
        "            time.sleep(0.01)\n"
        "    if not STARTED:\n        STARTED.append(threading.Thread(target=meddle, daemon=True))\n"
        "        STARTED[0].start()\n"
        "    return 3"),
}


def write_db_class(root: Path, victim_tag: str) -> Path:
    """Lab 98: a correct victim (every exercise) and the :data:`DB_ATTACKS` (98.1 only); return the class folder."""
    from course.handout.notebooks import write_notebook
    from support.fake_lesson import notebook

    from support.relay_attacks import HONEST

    submissions = root / "dbclass"
    for learner, answer in (("victim", DB_SOLUTION), *DB_ATTACKS.items()):
        rest = [code(HONEST[exercise], f"exercise:{exercise}") for exercise in ("98.2", "98.3") if learner == "victim"]
        nb = notebook(code(fake_lesson.DB_START), code(f"VICTIM_TAG = {victim_tag!r}\n" + answer, "exercise:98.1"),
                      *rest, lab="98")
        (submissions / learner).mkdir(parents=True)
        write_notebook(nb, submissions / learner / "98-fake-db-lab.ipynb")
    return submissions
