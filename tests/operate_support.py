"""A flow to operate on: it fails until it is retried with ``fine: true``."""

from __future__ import annotations

FLAKY_FLOW = """\
flow: flaky
inputs:
  fine: { type: boolean, default: false }
steps:
  - first:
      log: { message: "first step" }
  - check:
      if: "{{ not fine }}"
      fail: "not fine yet"
  - done:
      exit: fine
"""
