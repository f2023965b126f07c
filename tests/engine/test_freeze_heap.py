"""A worker's process freezes its start-up heap, so that full collections skip it."""

from __future__ import annotations

import subprocess
import sys

FREEZE = """
import gc
from tarry.engine.worker import freeze_heap
moved = freeze_heap()
print(moved, gc.get_freeze_count(), len(gc.get_objects()))
"""


def test_freeze_heap_moves_what_is_alive_into_the_permanent_generation() -> None:
    # in a process of its own: what it freezes is never freed
    found = subprocess.run([sys.executable, "-c", FREEZE], capture_output=True, text=True,
                           check=True, timeout=60).stdout.split()
    moved, frozen, tracked = (int(figure) for figure in found)
    assert moved == frozen > 10_000  # the modules, the expression parser
    assert tracked < moved / 10  # what the collector still walks
