"""What the learners' hand-out withholds: hidden assertions, and for a graded release the solutions.

``course release --to DIR`` copies the lesson modules (``course/lessons/*.py``)
through :func:`withhold`, a transform of their syntax tree applied to the
source text (everything else, comments included, stays as it was):

* every method decorated with ``@hidden(...)`` becomes a stub with the same
  decorator (so ``check()`` still says how many checks run when the work is
  graded) and no body: its name, docstring and code stay with the instructor;
* helpers (module functions, methods, module constants) that only withheld
  code used are withheld too (:func:`drop_unused`);
* with ``graded=True`` every ``solution_code`` is blanked, and
  :data:`WITHHELD_SOLUTION` is what ``solution()`` shows instead
  (:func:`withhold_solution_method` rewrites ``Exercise.solution``).

:func:`hidden_assertions` lists what is withheld, for the release's own checks
and for tests that search a hand-out for any trace of it.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from dataclasses import dataclass

STUB_PREFIX = "_graded_check_"
STUB_MESSAGE = "hidden checks run only when your work is graded"
WITHHELD_SOLUTION = "# The reference solution is withheld until your work has been graded."
#: module names no transform removes: the lesson contract (course.lessons reads them by name)
PROTECTED = frozenset({"TITLE", "SLUG", "EXERCISES", "__all__"})


class WithholdError(ValueError):
    """A source cannot be transformed safely; the message names the file and why."""


@dataclass(frozen=True)
class Withheld:
    """One thing taken out of a source: what kind, its qualified name, and the text removed."""

    kind: str  #: "hidden assertion", "helper" or "solution"
    name: str  #: e.g. "Pages.edge_sizes": the class and the method
    source: str


@dataclass(frozen=True)
class _Edit:
    start: int  #: first line (1-based)
    end: int  #: last line (inclusive)
    lines: tuple[str, ...]  #: what replaces them


def _hidden_decorator_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """Names bound to ``course.engine.exercise.hidden``, and names bound to the ``course.engine.exercise`` module."""
    functions, modules = {"hidden"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "course.engine.exercise":
            functions |= {a.asname or a.name for a in node.names if a.name == "hidden"}
        elif isinstance(node, ast.ImportFrom) and node.module == "course":
            modules |= {a.asname or a.name for a in node.names if a.name == "exercise"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == "course.engine.exercise" and a.asname}
    return functions, modules


def _hidden_decorator(node: ast.AST, functions: set[str], modules: set[str]) -> ast.expr | None:
    """The ``@hidden`` decorator of a function node, if it has one."""
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Name) and target.id in functions:
            return decorator
        if isinstance(target, ast.Attribute) and target.attr == "hidden":
            if isinstance(target.value, ast.Name) and target.value.id in modules | {"exercise"}:
                return decorator
            if ast.unparse(target.value) == "course.engine.exercise":
                return decorator
    return None


def _first_line(node: ast.AST, lines: list[str]) -> int:
    """The node's first line, decorators and the comment lines right above it included."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    while first > 1 and lines[first - 2].strip().startswith("#"):
        first -= 1
    return first


def _segment(lines: list[str], start: int, end: int) -> str:
    return "\n".join(lines[start - 1:end])


def _stub(indent: str, decorator: str, number: int) -> tuple[str, ...]:
    return (f"{indent}{decorator}",
            f"{indent}def {STUB_PREFIX}{number}(self, answer):",
            f'{indent}    """A check that runs when your work is graded"""',
            f"{indent}    raise NotImplementedError({STUB_MESSAGE!r})")


def _classes(tree: ast.Module) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def _parse(source: str, where: str) -> ast.Module:
    try:
        return _parsed(source)
    except SyntaxError as error:
        raise WithholdError(f"{where}: not valid Python ({error.msg}, line {error.lineno})") from error


@functools.lru_cache(maxsize=512)
def _parsed(source: str) -> ast.Module:
    """``ast.parse(source)``, once per text (the trees are only read)."""
    return ast.parse(source)


def _apply(source: str, edits: list[_Edit]) -> str:
    lines = source.split("\n")
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        lines[edit.start - 1:edit.end] = list(edit.lines)
    return "\n".join(lines)


def hidden_assertions(source: str, where: str = "<source>") -> list[Withheld]:
    """Every ``@hidden`` method in ``source``, with its full text (decorators included)."""
    tree = _parse(source, where)
    lines = source.split("\n")
    functions, modules = _hidden_decorator_names(tree)
    found = []
    for klass in _classes(tree):
        for node in klass.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    _hidden_decorator(node, functions, modules) is not None:
                text = _segment(lines, _first_line(node, lines), node.end_lineno)
                found.append(Withheld("hidden assertion", f"{klass.name}.{node.name}", text))
    return found


def withhold(source: str, where: str = "<source>", *, graded: bool = False) -> tuple[str, list[Withheld]]:
    """``source`` with every hidden assertion replaced by a stub (and, if ``graded``, solutions blanked)."""
    tree = _parse(source, where)
    lines = source.split("\n")
    functions, modules = _hidden_decorator_names(tree)
    edits, withheld = [], []
    for klass in _classes(tree):
        number = 0
        for node in klass.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                decorator = _hidden_decorator(node, functions, modules)
                if decorator is None:
                    continue
                number += 1
                start = _first_line(node, lines)
                indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
                edits.append(_Edit(start, node.end_lineno,
                                   _stub(indent, "@" + ast.get_source_segment(source, decorator), number)))
                withheld.append(Withheld("hidden assertion", f"{klass.name}.{node.name}",
                                         _segment(lines, start, node.end_lineno)))
            elif graded and _assigns(node, "solution_code"):
                indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
                edits.append(_Edit(node.lineno, node.end_lineno, (f'{indent}solution_code = ""',)))
                withheld.append(Withheld("solution", f"{klass.name}.solution_code",
                                         _segment(lines, node.lineno, node.end_lineno)))
    _check_disjoint(edits, where)
    return _apply(source, edits), withheld


def _assigns(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    return isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name


def _check_disjoint(edits: list[_Edit], where: str) -> None:
    ordered = sorted(edits, key=lambda e: e.start)
    for before, after in zip(ordered, ordered[1:]):
        if after.start <= before.end:
            raise WithholdError(f"{where}: lines {after.start}-{after.end} overlap another withheld block")


def _definitions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """Module functions, module single-name assignments and non-assertion methods: (name, node)."""
    found = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                found.append((targets[0].id, node))
        elif isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                        not any(_is_assertion_decorator(d) for d in member.decorator_list) and \
                        not (member.name.startswith("__") and member.name.endswith("__")):
                    found.append((member.name, member))
    return found


def _is_assertion_decorator(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
    return name in ("visible", "hidden", "hidden_for")


def _course_imports(tree: ast.Module) -> list[ast.ImportFrom]:
    return [node for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 0
            and (node.module or "").split(".")[0] == "course"]


def _imports_blanked(source: str) -> str:
    """``source`` with its ``from course... import ...`` statements blanked: what uses a name, not what imports it."""
    lines = source.split("\n")
    for node in _course_imports(_parsed(source)):
        for number in range(node.lineno - 1, node.end_lineno):
            lines[number] = ""
    return "\n".join(lines)


def _unimport(source: str, ident: str) -> str:
    """``source`` with ``ident`` taken out of its ``from course... import`` statements."""
    lines = source.split("\n")
    edits = []
    for node in _course_imports(_parsed(source)):
        kept = [a for a in node.names if (a.asname or a.name) != ident]
        if len(kept) == len(node.names):
            continue
        indent = re.match(r"\s*", lines[node.lineno - 1]).group(0)
        text = ast.unparse(ast.ImportFrom(node.module, kept, 0)) if kept else None
        edits.append(_Edit(node.lineno, node.end_lineno, (indent + text,) if text else ()))
    return _apply(source, edits)


_TOKEN = re.compile(r"\w+")


def _tokens(text: str) -> Counter:
    return Counter(_TOKEN.findall(text))


def drop_unused(sources: dict[str, str], others: list[str], withheld: list[Withheld]) -> dict[str, str]:
    """Withhold the helpers that only withheld code used; ``sources`` maps file name -> lesson source.

    A definition (module function or constant, or method) is dropped when its
    name occurs in withheld text and is used nowhere else: not in any lesson
    source (outside its own definition and ``from course... import``
    statements, which lose the name too), nor in ``others`` (every other text
    of the hand-out: the engine, the labs).  An import of such a name that
    nothing uses any more goes as well.  Repeats until nothing more goes;
    appends each helper it dropped to ``withheld``.  (Names are compared as
    whole words, so a mention in a string or a comment keeps a definition.)
    """
    sources = dict(sources)
    elsewhere = set().union(*(_tokens(text) for text in others)) if others else set()
    trees: dict[str, ast.Module] = {}

    def tree_of(name: str, source: str) -> ast.Module:
        if source not in trees:
            trees[source] = _parse(source, name)
        return trees[source]

    while True:
        mentioned = set().union(*(_tokens(w.source) for w in withheld)) if withheld else set()
        raw = {name: _tokens(source) for name, source in sources.items()}
        blanked = {name: _imports_blanked(source) for name, source in sources.items()}
        uses = {name: _tokens(text) for name, text in blanked.items()}
        change = None
        for name, source in sources.items():
            tree = tree_of(name, source)
            lines, used_lines = source.split("\n"), blanked[name].split("\n")
            for ident, node in _definitions(tree):
                if ident in PROTECTED or ident not in mentioned or ident in elsewhere:
                    continue
                start = _first_line(node, lines)
                own = _tokens("\n".join(used_lines[start - 1:node.end_lineno]))[ident]
                if uses[name][ident] > own or any(uses[n][ident] for n in sources if n != name):
                    continue
                withheld.append(Withheld("helper", ident, _segment(lines, start, node.end_lineno)))
                change = ("definition", name, ident, _apply(source, [_Edit(start, node.end_lineno, ())]))
                break
            if change:
                break
            for node in _course_imports(tree):
                for alias in node.names:
                    ident = alias.asname or alias.name
                    if ident in PROTECTED or ident not in mentioned or ident in elsewhere or uses[name][ident] \
                            or any(raw[n][ident] for n in sources if n != name):
                        continue
                    change = ("import", name, ident, _unimport(source, ident))
                    break
                if change:
                    break
            if change:
                break
        if change is None:
            return sources
        kind, name, ident, text = change
        sources[name] = text
        if kind == "definition":  # nothing uses it: every lesson stops importing it
            sources = {n: _unimport(s, ident) if raw[n][ident] else s for n, s in sources.items()}


def withhold_solution_method(source: str, where: str = "course/engine/exercise.py") -> str:
    """The engine's source with ``Exercise.solution`` returning :data:`WITHHELD_SOLUTION`."""
    tree = _parse(source, where)
    lines = source.split("\n")
    for klass in _classes(tree):
        if klass.name != "Exercise":
            continue
        for node in klass.body:
            if isinstance(node, ast.FunctionDef) and node.name == "solution":
                body = node.body
                start = body[0].lineno
                if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                    start = body[0].end_lineno + 1  # keep the docstring
                indent = re.match(r"\s*", lines[body[-1].lineno - 1]).group(0)
                edit = _Edit(start, node.end_lineno, (f"{indent}return Solution(self.id, {WITHHELD_SOLUTION!r})",))
                return _apply(source, [edit])
    raise WithholdError(f"{where}: no Exercise.solution method to withhold the solutions with")
