"""Database access: the backends a lab runs on, what each can check, and the course's namespace.

Here: :mod:`~course.store.backends` (open mongoeco, mongomock or a server from ``MONGODB_URI``),
:mod:`~course.store.capabilities` (what a backend cannot check, declared once), :mod:`~course.store.namespace`
(every database the course touches starts with its prefix), :mod:`~course.store.quirks` (each engine's
quirks, declared beside the capabilities, and the patches that absorb them: :mod:`course.store.mongoeco`
and :mod:`course.store.mongomock`), :mod:`~course.store.patch_check` (a patch applies only to the release
it was written for) and :mod:`~course.store.engine_imports` (mongoeco's import, made lazy).

May use: nothing else of the course.  Everything else may use it.
"""
