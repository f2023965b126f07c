"""Durable Python functions: the App, the Context a flow receives, wait strategies.

Import these from :mod:`tarry` itself; the modules of this package are private.
"""
