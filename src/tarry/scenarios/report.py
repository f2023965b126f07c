"""What ``tarry test`` prints and writes: one line per scenario, the differences, JUnit XML.

All of it is pure text built from :class:`~tarry.scenarios.runner.ScenarioResult`\\ s::

    PASS approved-after-two-hours (0.03s)
    FAIL no-answer (0.02s)
      scenarios/no-answer.yaml:14:9: exit: expected "no-answer", got "approved"
      scenarios/no-answer.yaml:16:5: history: differs (- expected, + actual):
          created
        - step.skipped
        + step.started
    ERROR typo (0.00s)
      scenarios/typo.yaml:2:7: no flow named 'dael' in flows (did you mean 'deal'?)

Values are shown as JSON. A binding path that does not exist shows as ``nothing``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any
from xml.etree import ElementTree

from tarry.scenarios.compare import Mismatch, Missing
from tarry.scenarios.runner import ScenarioResult

__all__ = ["describe_value", "junit_xml", "mismatch_lines", "result_lines", "summary"]

_INDENT = "  "


def result_lines(result: ScenarioResult) -> list[str]:
    """The verdict line of one scenario, then (when it did not pass) why, indented."""
    verdict = "ERROR" if result.problems else ("PASS" if result.passed else "FAIL")
    details = [str(problem) for problem in result.problems] or [
        line for mismatch in result.mismatches for line in mismatch_lines(mismatch)]
    return [f"{verdict} {result.scenario.name} ({result.seconds:.2f}s)",
            *(_INDENT + line for line in details)]


def mismatch_lines(mismatch: Mismatch) -> list[str]:
    """One failed expectation: where, what, expected and actual (a diff for lists)."""
    where = f"{mismatch.pos}: {mismatch.label}"
    if mismatch.note:
        listing = mismatch.actual if isinstance(mismatch.actual, list) else []
        return [f"{where}: {mismatch.note}" + (", which was:" if listing else ""),
                *(_INDENT * 2 + _item(item) for item in listing),
                *(_INDENT * 2 + line for line in mismatch.details)]
    if isinstance(mismatch.expected, list) and isinstance(mismatch.actual, list):
        return [f"{where}: differs (- expected, + actual):",
                *(_INDENT + line for line in _diff(mismatch.expected, mismatch.actual))]
    return [f"{where}: expected {describe_value(mismatch.expected)}, "
            f"got {describe_value(mismatch.actual)}"]


def describe_value(value: Any) -> str:
    """A value as reports show it: JSON, or ``nothing ('x.y' does not exist)``."""
    if isinstance(value, Missing):
        return f"nothing ('{value.at}' does not exist)"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _item(value: Any) -> str:
    """A list item on a line of its own: a string as it is (a history kind), else JSON."""
    return value if isinstance(value, str) else describe_value(value)


def _diff(expected: Sequence[Any], actual: Sequence[Any]) -> list[str]:
    """A line diff; unchanged lines are kept for context, ndiff's hint lines dropped."""
    lines = difflib.ndiff([_item(item) for item in expected], [_item(item) for item in actual])
    return [line for line in lines if not line.startswith("? ")]


def summary(results: Sequence[ScenarioResult]) -> str:
    """``3 scenarios: 2 passed, 1 failed`` (and how many could not run)."""
    errors = sum(1 for result in results if result.problems)
    passed = sum(1 for result in results if result.passed)
    counts = [f"{passed} passed", f"{len(results) - passed - errors} failed"]
    if errors:
        counts.append(f"{errors} could not run")
    noun = "scenario" if len(results) == 1 else "scenarios"
    return f"{len(results)} {noun}: {', '.join(counts)}"


def junit_xml(results: Sequence[ScenarioResult], *, suite: str = "tarry test") -> str:
    """The results as a JUnit XML document (one ``testcase`` per scenario)."""
    cases = [_testcase(result) for result in results]
    totals = {"tests": str(len(results)),
              "failures": str(sum(1 for r in results if r.mismatches and not r.problems)),
              "errors": str(sum(1 for r in results if r.problems)),
              "skipped": "0",
              "time": f"{sum(r.seconds for r in results):.3f}"}
    root = ElementTree.Element("testsuites", {"name": suite, **totals})
    suite_element = ElementTree.SubElement(root, "testsuite", {"name": suite, **totals})
    suite_element.extend(cases)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(result: ScenarioResult) -> ElementTree.Element:
    path = result.scenario.path
    case = ElementTree.Element("testcase", {
        "name": result.scenario.name, "classname": _classname(path), "file": path,
        "time": f"{result.seconds:.3f}"})
    details = "\n".join(result_lines(result)[1:])
    if result.problems:
        ElementTree.SubElement(case, "error", {
            "type": "LoadError", "message": str(result.problems[0])}).text = details
    elif result.mismatches:
        count = len(result.mismatches)
        ElementTree.SubElement(case, "failure", {
            "type": "ScenarioFailed",
            "message": f"{count} expectation{'' if count == 1 else 's'} failed"}).text = details
    return case


def _classname(path: str) -> str:
    """``scenarios.approved`` for ``scenarios/approved.yaml``: the file, as a dotted name."""
    return ".".join(PurePath(path).with_suffix("").parts)
