"""Checking a person's answer to a task, without I/O: who may answer, and what.

A task assigned to principals may be completed by those only (no ``assign``: by anyone). The
outcome must be one of the task's; the data must be a JSON object that its form (a JSON
Schema) accepts, or, without a form, empty.
"""

from __future__ import annotations

from typing import Any

from tarry._suggest import did_you_mean
from tarry.language.schemas import validation_problems, validator
from tarry.model import TaskRequest

__all__ = ["completion_problems", "may_complete"]


def may_complete(task: TaskRequest, principal: str) -> bool:
    """Whether ``principal`` may complete ``task``."""
    return not task.assign or principal in task.assign


def completion_problems(task: TaskRequest, outcome: Any, data: Any) -> list[str]:
    """Why ``outcome`` and ``data`` are not an answer ``task`` accepts (empty: they are)."""
    return _outcome_problems(task, outcome) + _data_problems(task, data)


def _outcome_problems(task: TaskRequest, outcome: Any) -> list[str]:
    if isinstance(outcome, str) and outcome in task.outcomes:
        return []
    shown = repr(outcome) if not isinstance(outcome, str) else f"'{outcome}'"
    hint = did_you_mean(outcome, task.outcomes) if isinstance(outcome, str) else ""
    return [f"outcome {shown} is not one of the task's outcomes ({', '.join(task.outcomes)})"
            f"{hint}"]


def _data_problems(task: TaskRequest, data: Any) -> list[str]:
    if not isinstance(data, dict):
        return [f"data must be a JSON object, got {type(data).__name__}"]
    if task.form is None:
        return [] if not data else ["this task has no form: send no data"]
    return [f"data: {problem}" for problem in validation_problems(validator(task.form), data)]
