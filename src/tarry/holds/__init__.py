"""Holds: the gate in front of a run's first step.

- ``cadence``: the pure timing (interval, jitter, clamps, slot re-deferral);
- ``checks``: running one operator check under the exit-code contract;
- ``state``: a held run's gate as data and the pure decisions on it;
- ``admission``: starting a held run and the refusals decided at start;
- ``gate``: evaluating a held run's conditions on each wake;
- ``action``: the built-in ``check`` action;
- ``service``: :class:`Holds`, what all of them share at run time;
- ``doctor``: the deployment checks of ``tarry doctor``.
"""

from tarry.holds.service import Holds

__all__ = ["Holds"]
