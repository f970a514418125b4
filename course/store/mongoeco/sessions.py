"""mongoeco's sessions as pymongo's: ``with session.start_transaction():`` commits or aborts."""

from __future__ import annotations

from typing import Any, Callable

from course.store.patch_check import written_for


class _Transaction:
    """What pymongo's ``start_transaction()`` returns: commit when the block ends, abort on an exception."""

    def __init__(self, session: Any):
        self._session = session

    def __enter__(self) -> "_Transaction":
        return self

    def __exit__(self, kind, error, trace) -> None:
        if not self._session.in_transaction:
            return
        if kind is None:
            self._session.commit_transaction()
        else:
            self._session.abort_transaction()


@written_for("9ebc5b85c2a3ca10")
def _transaction_context(original: Callable) -> Callable:
    def start_transaction(self, *args, **kwargs):
        returned = original(self, *args, **kwargs)
        return _Transaction(self) if returned is None else returned

    return start_transaction
