"""A pytest plugin, loaded before every other (``-p support.lean_startup`` in pyproject.toml): the test
process skips what the course's own commands skip (:func:`course.store.engine_imports.skip_unused_imports`).

nbval, loaded next, imports nbformat and with it jsonschema, whose "iri" format checker builds a parser
grammar at import (about 1.7 s of every pytest run).  The course never checks a "format".
"""

from course.store.engine_imports import skip_unused_imports


def pytest_addoption(parser) -> None:
    """Called as soon as the plugin registers, before any other plugin is imported: skip them then."""
    skip_unused_imports()
