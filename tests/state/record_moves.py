"""Stored waiting runs kept to be moved: runs of this release caught in the waits that
moving a run to a new definition must place exactly (a task open, a wait inside a repeat
inside a group, a reminder being sent, a recover step), each with the fixed definition it
moves to.

Like ``record_states.py`` (whose cases, of every release, are moved too, by
``test_stored_moves.py``), each :class:`MoveCase` starts its flow, drives it until it waits
and keeps what the store holds of the run in ``tests/state/moves/v<state version>/``;
``test_stored_moves.py`` loads it, moves it to ``fixed``, finishes it and checks the new
definition's behaviour. Regenerate the files of the current version (and review the diff)
with::

    .venv/bin/python tests/state/record_moves.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from record_states import Advance, Case, Complete, Send, dump, record  # noqa: E402

MOVED = HERE / "moves"


@dataclass(frozen=True)
class MoveCase:
    """A run caught waiting (``case``), the definition it moves to (``fixed``) and the log
    messages the finished run must have recorded (``logged``)."""

    case: Case
    fixed: str
    logged: tuple[str, ...] = ()


ASK = """\
flow: stored-ask
steps:
  - review:
      ask: { title: "Check order o-3", outcomes: [accept, reject] }
      timeout: 2d
  - decided: { set: { said: "{{ review.outcome }}" } }
"""

NESTED = """\
flow: stored-nested
steps:
  - outer:
      steps:
        - polls:
            repeat: { every: 1m, max: 3, until: "{{ reply.status == 'received' }}" }
            steps:
              - reply:
                  wait_for: order.reply
                  match: { order: "n-{{ loop.index }}" }
                  timeout: 10m
"""

REMINDING = """\
flow: stored-reminding
steps:
  - reply:
      wait_for: order.reply
      match: { order: "o-5" }
      timeout: 3h
      remind:
        every: 1h
        steps:
          - pause: { wait: { for: 10m } }
          - nudge: { log: { message: "still waitng" } }
"""

RECOVERING = """\
flow: stored-recovering
steps:
  - call: { fail: "no luck" }
recover:
  - pause: { wait: { for: 1h } }
  - tell: { log: { message: "recoverd from {{ error.step }}" } }
"""

MOVE_CASES: tuple[MoveCase, ...] = (
    MoveCase(Case("yaml-ask", ASK, after=(Complete("accept", "alice"),),
                  expect={"status": "succeeded",
                          "bindings": {"decided": {"said": "accept by alice"}}}),
             ASK.replace('"{{ review.outcome }}"', '"{{ review.outcome }} by {{ review.by }}"')),
    MoveCase(Case("yaml-nested", NESTED, after=(Send("order.reply", {"order": "n-0"}),),
                  expect={"status": "succeeded",
                          "bindings": {"outer": {"noted": {"ok": True}}}}),
             NESTED + "        - noted: { set: { ok: true } }\n"),
    MoveCase(Case("yaml-reminding", REMINDING, before=(Advance(timedelta(minutes=65)),),
                  after=(Advance(timedelta(minutes=20)), Send("order.reply", {"order": "o-5"})),
                  expect={"status": "succeeded", "bindings": {"reply": {"status": "received"}}}),
             REMINDING.replace("still waitng", "still waiting"), logged=("still waiting",)),
    MoveCase(Case("yaml-recovering", RECOVERING, after=(Advance(timedelta(hours=2)),),
                  expect={"status": "succeeded"}),
             RECOVERING.replace("recoverd", "recovered"), logged=("recovered from call",)),
)


def path_of(version: int, name: str) -> Path:
    """Where the stored run of move case ``name`` at state ``version`` lives."""
    return MOVED / f"v{version}" / f"{name}.json"


async def main() -> None:
    """Record every move case with the tarry on the import path."""
    with tempfile.TemporaryDirectory() as folder:
        for moving in MOVE_CASES:
            document = await record(moving.case, Path(folder) / moving.case.name)
            target = path_of(document["version"], moving.case.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(dump(document), encoding="utf-8")
            print(f"wrote {target.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    asyncio.run(main())
