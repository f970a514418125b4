"""Patches to mongomock's internals, one module per patched behaviour (listed in :data:`course.store.quirks.QUIRKS`).

May use: :mod:`course.store.patch_check`.  Applied by :func:`course.store.quirks.absorb`.
"""
