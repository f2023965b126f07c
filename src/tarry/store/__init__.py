"""Persistence behind one narrow interface (:class:`tarry.store.base.Store`)."""

from tarry.store.open import open_store

__all__ = ["open_store"]
