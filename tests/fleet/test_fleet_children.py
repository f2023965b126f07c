"""Child flows under SIGKILL, on both stores: two real ``tarry worker`` processes run parents
that each call five children in parallel (a ``for_each`` with ``concurrency``), while a
chaos loop SIGKILLs a worker each time a few more children have ended and starts
another (each worker takes four runs at a time, so the work is spread out), so kills land
while a parent starts its children and while children end and wake their parents. Afterwards: no
child was started twice (each parent has exactly its five, each named by the step that
waits for it), no parent was left waiting for a child that ended, and every run succeeded
with the children's outcomes bound in its parent."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

import pytest
from fleet_support import Fleet, FleetProject, wait_until

from tarry.engine.runtime import Engine
from tarry.model import RunStatus

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PARENTS = 16
CHILDREN = 5
KILL_AFTER = 8
"""Children ended between two kills: kills are paced by the fleet's progress, not by the
clock, so a fast machine sees as many as a slow one (about ten in all) and a slow one is never
killed faster than it gets work done."""
SEED = 11

PARENT = f"""\
flow: parent
steps:
  - each:
      for_each: {list(range(CHILDREN))}
      as: n
      concurrency: {CHILDREN}
      steps:
        - kid:
            call: {{ flow: child, inputs: {{ n: "{{{{ n }}}}" }} }}
  - done:
      set: {{ children: "{{{{ each | length }}}}" }}
"""

CHILD = """\
flow: child
inputs:
  n: { type: integer, required: true }
steps:
  - work:
      busy: { n: "{{ n }}" }
  - rest:
      wait: { for: 300ms }
  - more:
      busy: { n: "{{ n }}" }
  - done:
      exit: "worked"
"""

ACTIONS = '''\
"""A child's work: a short pause, so that kills catch some of it in flight."""

import random
import time


def busy(args, ctx):
    time.sleep(random.uniform(0.01, 0.08))
    return {"n": args["n"]}
'''


def write_project(root: Path, url: str) -> FleetProject:
    root.mkdir(parents=True)
    (root / "tarry.toml").write_text(
        f'[tarry]\ndatabase = {json.dumps(url)}\n\n[actions]\nbusy = "child_actions:busy"\n'
        # a run taken over again and again by the kills is not failed as crashed
        "\n[limits]\nrecovery_max = 20\n", encoding="utf-8")
    (root / "flows").mkdir()
    (root / "flows" / "parent.yaml").write_text(PARENT, encoding="utf-8")
    (root / "flows" / "child.yaml").write_text(CHILD, encoding="utf-8")
    (root / "child_actions.py").write_text(ACTIONS, encoding="utf-8")
    return FleetProject(root.resolve(), url)


class Chaos:
    """Between two looks at the store: SIGKILL a random worker each time another
    ``KILL_AFTER`` children have ended (while the others are being worked on), and start
    another in its place."""

    def __init__(self, fleet: Fleet, rng: random.Random, engine: Engine) -> None:
        self.fleet = fleet
        self.rng = rng
        self.engine = engine
        self.ended_at_kill = 0

    def __call__(self) -> None:
        time.sleep(0.1)
        ended = _statuses(self.engine)["child succeeded"]
        if ended - self.ended_at_kill >= KILL_AFTER and ended < PARENTS * CHILDREN:
            self.fleet.kill_one_and_replace(self.rng)
            self.ended_at_kill = ended


def _all_ended(engine: Engine, parents: list[str]) -> bool | None:
    return True if all(engine.get(run).status.is_terminal for run in parents) else None


def _statuses(engine: Engine) -> Counter[str]:
    return Counter(f"{run.flow} {run.status}" for run in engine.store.list_runs(limit=1000))


def test_children_survive_workers_killed_at_random(tmp_path: Path, store_url: str) -> None:
    rng = random.Random(SEED)
    project = write_project(tmp_path / "project", store_url)
    engine = project.engine()
    fleet = Fleet(project, ("--lease", "1", "--concurrency", "4"), tmp_path / "logs")
    try:
        parents = [run.id for run in engine.start_many("parent", [None] * PARENTS)]
        fleet.start(2)
        wait_until(lambda: _all_ended(engine, parents), seconds=200,
                   what="every parent to end", between=Chaos(fleet, rng, engine),
                   explain=lambda: f"runs: {dict(_statuses(engine))}")
        assert fleet.stop() == [0, 0], fleet.log_text()
    finally:
        fleet.kill_all()
    try:
        assert fleet.killed >= 3
        assert _statuses(engine) == Counter({"parent succeeded": PARENTS,
                                             "child succeeded": PARENTS * CHILDREN})
        recovered = 0
        for parent in parents:
            children = engine.store.children(parent)
            document = engine.document(parent)
            bound = [each["kid"] for each in document["bindings"]["each"]]
            assert sorted(kid["run"] for kid in bound) == sorted(children)  # none twice
            assert {kid["status"] for kid in bound} == {"succeeded"}
            assert document["bindings"]["done"] == {"children": CHILDREN}
            started = [e for e in document["history"] if e["kind"] == "child.started"]
            assert sorted(e["data"]["run"] for e in started) == sorted(children)
            steps = Counter(engine.store.get_run(c).parent_id for c in children)
            assert steps == {parent: CHILDREN}
            recovered += sum(e["kind"] == "recovered" for e in document["history"])
            for child in children:
                kid = engine.document(child)
                assert kid["status"] == RunStatus.SUCCEEDED.value
                recovered += sum(e["kind"] == "recovered" for e in kid["history"])
        assert recovered, "no kill caught a worker with runs in flight"
    finally:
        engine.close()
