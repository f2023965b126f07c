"""What a run has measured so far, kept as it goes, so that an interrupted run is resumed
(``run.py --resume``) rather than started again: the full preset takes hours.

The file is JSON lines beside the result (``peers-<date>.partial.jsonl``): first the run's
plan (sizes, rounds, systems and workloads), then a line per round's raw rate and one per
measurement, each written as soon as it is made. A resumed run keeps those, but for the
measurements that ended in an error, and measures the rest; the file is removed once the
result is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import say

__all__ = ["Progress", "partial_path"]


def partial_path(result: Path) -> Path:
    """Where the run writing ``result`` keeps its measurements as it goes."""
    return result.with_name(f"{result.stem}.partial.jsonl")


class Progress:
    """The rounds' raw rates and the measurements of one run, kept on disk as they are made."""

    def __init__(self, path: Path, plan: dict[str, Any], *, resume: bool) -> None:
        """Start keeping a run of ``plan`` at ``path`` or, with ``resume``, go on with the
        interrupted run kept there (which must have had the same plan)."""
        self.path = path
        self.limits: dict[int, dict[str, float]] = {}
        self.measured: dict[str, dict[str, Any]] = {}
        if resume:
            self._load(json.loads(json.dumps(plan)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"plan": plan}) + "\n", encoding="utf-8")

    def limit(self, number: int, measure: Callable[[], dict[str, float]]) -> dict[str, float]:
        """Round ``number``'s raw rates: kept, or measured now and kept."""
        if number not in self.limits:
            self.limits[number] = measure()
            self._keep({"round": number, "limit": self.limits[number]})
        return self.limits[number]

    def measurement(self, label: str, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The measurement ``label``: kept by the interrupted run (unless it failed), or
        made now and kept."""
        kept = self.measured.get(label)
        if kept is not None:
            say(f"  {label}: kept from the interrupted run")
            return kept
        made = measure()
        self._keep({"label": label, "measurement": made})
        return made

    def done(self) -> None:
        """The result is written: forget the run."""
        self.path.unlink(missing_ok=True)

    def _keep(self, line: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(line) + "\n")

    def _load(self, plan: dict[str, Any]) -> None:
        if not self.path.exists():
            raise SystemExit(f"--resume: no interrupted run is kept at {self.path}")
        lines = self.path.read_text(encoding="utf-8").splitlines()
        if not lines or json.loads(lines[0]).get("plan") != plan:
            raise SystemExit(f"--resume: {self.path} is a run with other sizes, rounds, "
                             "systems or workloads; give the same options, or start afresh "
                             "without --resume")
        for text in lines[1:]:
            try:
                line = json.loads(text)
            except json.JSONDecodeError:  # the line being written when the run was stopped
                continue
            if "limit" in line:
                self.limits[line["round"]] = line["limit"]
            elif "error" not in line["measurement"]["reply"]:  # an error is measured again
                self.measured[line["label"]] = line["measurement"]
        say(f"resuming: {len(self.measured)} measurements kept from {self.path}")
