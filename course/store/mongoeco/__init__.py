"""Patches to mongoeco's internals, one module per patched behaviour (listed in :data:`course.store.quirks.QUIRKS`).

May use: :mod:`course.store.patch_check` and each other.  Applied by :func:`course.store.quirks.absorb`.
"""
