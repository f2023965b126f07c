"""Persistence behind one narrow interface (:class:`tarry.store.base.Store`)."""
