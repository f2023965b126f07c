"""Scenario tests: flows run on a virtual clock with stubbed actions and scripted events.

A scenario file names a flow, its inputs, the actions and hold checks to stub, the events to
send at virtual instants, the schedules that fire, and what the run — and the runs triggers
start — must come to; ``tarry test`` runs scenario files and reports each one, and the
``tarry_scenario`` pytest fixture runs one from a test. See docs/testing.md.
"""

from tarry.scenarios.compare import Mismatch, Missing, Observed
from tarry.scenarios.loader import load_scenario, parse_scenario
from tarry.scenarios.model import (
    CheckPhase,
    CheckStub,
    Downtime,
    Expectation,
    ExpectedRun,
    RealCheck,
    Scenario,
    ScriptedEvent,
    ScriptedTask,
    Stub,
    StubFailure,
)
from tarry.scenarios.report import junit_xml, result_lines, summary
from tarry.scenarios.runner import ScenarioResult, project_settings, run_scenario
from tarry.scenarios.started import StartedRun

__all__ = [
    "CheckPhase",
    "CheckStub",
    "Downtime",
    "Expectation",
    "ExpectedRun",
    "Mismatch",
    "Missing",
    "Observed",
    "RealCheck",
    "Scenario",
    "ScenarioResult",
    "ScriptedEvent",
    "ScriptedTask",
    "StartedRun",
    "Stub",
    "StubFailure",
    "junit_xml",
    "load_scenario",
    "parse_scenario",
    "project_settings",
    "result_lines",
    "run_scenario",
    "summary",
]
