"""Scenario tests: flows run on a virtual clock with stubbed actions and scripted events.

A scenario file names a flow, its inputs, the actions to stub, the events to send at virtual
instants and what the run must come to; ``tarry test`` runs scenario files and reports each
one, and the ``tarry_scenario`` pytest fixture runs one from a test. See docs/testing.md.
"""

from tarry.scenarios.compare import Mismatch, Missing, Observed
from tarry.scenarios.loader import load_scenario, parse_scenario
from tarry.scenarios.model import (
    Expectation,
    Scenario,
    ScriptedEvent,
    ScriptedTask,
    Stub,
    StubFailure,
)
from tarry.scenarios.report import junit_xml, result_lines, summary
from tarry.scenarios.runner import ScenarioResult, project_settings, run_scenario

__all__ = [
    "Expectation",
    "Mismatch",
    "Missing",
    "Observed",
    "Scenario",
    "ScenarioResult",
    "ScriptedEvent",
    "ScriptedTask",
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
