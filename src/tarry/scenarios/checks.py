"""Reading a scenario's ``checks:``: the hold checks it stubs, and those it runs for real.

A check is an operator's executable; a scenario either runs the real one,
``{ path: checks/ledger-closed.sh }`` (relative to the project root), or scripts its answers
by virtual instant, so that a check that reads the wall clock or another system still gives
the same answers on every run::

    checks:
      ledger: go                                            # every check says go
      deploy-window:                                        # by virtual instant
        - { answer: not_yet, until: "2026-10-26T08:00:00Z" }
        - { answer: go }
      jira: { path: checks/wait-jira.sh }                   # the real executable

Pure: nodes in, :class:`~tarry.scenarios.model.CheckScript`\\ s out, problems reported on the
context. Whether a path is an executable and a name a check of the project is decided against
the project (``resolve``).
"""

from __future__ import annotations

from datetime import datetime

from tarry._suggest import did_you_mean
from tarry.holds.checks import Answer
from tarry.language.context import LoadContext
from tarry.language.fields import Fields, read_instant, read_mapping, read_text
from tarry.language.yamlsource import YamlEntry, YamlMap, YamlNode, YamlScalar, YamlSeq, describe
from tarry.scenarios.model import CheckPhase, CheckScript, CheckStub, RealCheck

__all__ = ["ANSWERS", "read_checks"]

ANSWERS = tuple(answer.value for answer in Answer)
"""What a stubbed check may answer: the answers history records (``go``, ``not_yet``, …)."""

_PHASE_KEYS = ("answer", "until")
_SHAPE = (f"an answer ({', '.join(ANSWERS)}), a list of {{ answer, until }}, "
          "or { path: … }")
_REAL_NEAR_MISSES = dict.fromkeys(
    ("answer", "until", "run", "script", "exec", "command", "exit"),
    " (a real check is { path: … }; a stubbed one is an answer, such as 'go', or a list of "
    "{ answer, until })")


def read_checks(ctx: LoadContext, node: YamlNode, key: str) -> tuple[CheckScript, ...]:
    """The checks of ``checks:``, in file order."""
    mapping = read_mapping(ctx, node, key, " of check name to its answers or { path: … }, "
                                           "such as { deploy-window: go }")
    if mapping is None:
        return ()
    return tuple(_read_check(ctx, entry) for entry in mapping.entries)


def _read_check(ctx: LoadContext, entry: YamlEntry) -> CheckScript:
    where, node = f"check '{entry.key}'", entry.value
    if isinstance(node, YamlMap):
        return RealCheck(entry.key, _read_path(ctx, node, where), entry.key_pos)
    if isinstance(node, YamlSeq):
        return CheckStub(entry.key, _read_phases(ctx, node, where), entry.key_pos)
    if not isinstance(node, YamlScalar) or not isinstance(node.value, str):
        ctx.report(node.pos, f"{where} must be {_SHAPE}, got {describe(node)}")
        return CheckStub(entry.key, (CheckPhase(Answer.GO),), entry.key_pos)
    return CheckStub(entry.key, (CheckPhase(_answer(ctx, node, where)),), entry.key_pos)


def _read_path(ctx: LoadContext, node: YamlMap, where: str) -> str:
    fields = Fields(ctx, node, f"in {where}", allowed=("path",),
                    required={"path": " (the check's executable, relative to the project "
                                      "root)"},
                    near_misses=_REAL_NEAR_MISSES)
    path_entry = fields.entry("path")
    path = fields.read("path", read_text, "")
    if path_entry is not None and isinstance(path_entry.value, YamlScalar) \
            and isinstance(path_entry.value.value, str) and not path.strip():
        ctx.report(path_entry.value.pos, f"'path' of {where} must not be empty")
    return path


def _read_phases(ctx: LoadContext, node: YamlSeq, where: str) -> tuple[CheckPhase, ...]:
    if not node.items:
        ctx.report(node.pos, f"{where} must list at least one answer")
        return (CheckPhase(Answer.GO),)
    phases = [_read_phase(ctx, item, f"{where}[{index}]", last=index == len(node.items) - 1)
              for index, item in enumerate(node.items)]
    _check_order(ctx, node, phases, where)
    return tuple(phases)


def _read_phase(ctx: LoadContext, node: YamlNode, where: str, *, last: bool) -> CheckPhase:
    if not isinstance(node, YamlMap):
        ctx.report(node.pos, f"{where} must be a mapping such as {{ answer: not_yet, until: "
                             f"2026-10-26T08:00:00Z }} or {{ answer: go }}, got {describe(node)}")
        return CheckPhase(Answer.GO)
    fields = Fields(ctx, node, f"in {where}", allowed=_PHASE_KEYS,
                    required={"answer": f" ({', '.join(ANSWERS)})"})
    until = fields.entry("until")
    if last and until is not None:
        ctx.report(until.key_pos, f"the last answer of {where.rsplit('[', 1)[0]} must not "
                                  "have 'until': it answers every check after the others")
    elif not last and until is None and not fields.suggested("until"):
        ctx.report(node.pos, f"{where} needs 'until' (the instant its answer ends); only the "
                             "last answer goes on without one")
    answer = fields.entry("answer")
    return CheckPhase(_answer(ctx, answer.value, f"'answer' of {where}") if answer
                      else Answer.GO, fields.read("until", read_instant, None))


def _answer(ctx: LoadContext, node: YamlNode, where: str) -> Answer:
    text = node.value if isinstance(node, YamlScalar) and isinstance(node.value, str) else None
    if text is None or text not in ANSWERS:
        hint = did_you_mean(text.lower(), ANSWERS) if text is not None else ""
        ctx.report(node.pos, f"{where} must be one of {', '.join(ANSWERS)}, got "
                             f"{describe(node)}{hint}")
        return Answer.GO
    return Answer(text)


def _check_order(ctx: LoadContext, node: YamlSeq, phases: list[CheckPhase],
                 where: str) -> None:
    """Each ``until`` comes after the one before it."""
    previous: datetime | None = None
    for index, (phase, item) in enumerate(zip(phases, node.items, strict=True)):
        if phase.until is None:
            continue
        if previous is not None and phase.until <= previous and isinstance(item, YamlMap) \
                and (until := item.get("until")) is not None:
            ctx.report(until.value.pos, f"'until' of {where}[{index}] must come after the one "
                                        "before it")
        previous = phase.until
