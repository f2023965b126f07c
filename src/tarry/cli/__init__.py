"""The ``tarry`` command line (the console script calls :func:`main`)."""

from tarry.cli.app import app, main

__all__ = ["app", "main"]
