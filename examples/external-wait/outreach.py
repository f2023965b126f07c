"""Stand-ins for the outbound channels and far systems of the external-wait examples.

A real project would send mail, open a portal task or call a partner's API here; these fakes
only compute what such a call would return, deterministically, so the examples behave the same
on every machine and in tests. Each is called as ``action(args, ctx)`` with the step's rendered
arguments, and what it returns is the step's binding; a ``ValueError`` fails the step, as a
real client refusing a bad request would.

The correlation key a request carries is made from ``ctx.idempotency_key``, which is the same
for every attempt of the same step of the same run: actions run at least once, and a request
sent twice after a crash must carry the same key, or the first copy's reply would match nothing.
"""

from __future__ import annotations

from typing import Any, Protocol

__all__ = ["close_out", "declaration_status", "escalate", "remind", "send", "send_all",
           "submit_declaration", "summary"]

_CLEARANCE = ("lodged", "under_review")
"""What the customs broker reports on the first polls; every later poll reports ``cleared``."""


class Context(Protocol):
    """The part of the action context these fakes use."""

    @property
    def idempotency_key(self) -> str:
        """Stable across attempts of one step of one run."""
        ...


def send(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``request.send: {to, channel, subject}`` → ``{key, to, channel, subject}``.

    ``key`` is the correlation key the request carries and its reply brings back.
    """
    to = _required(args, "to", "request.send")
    return {"key": f"req-{ctx.idempotency_key[:16]}", "to": to,
            "channel": args.get("channel", "email"), "subject": args.get("subject", "")}


def send_all(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``request.send_all: {to: [entry, …], channel, subject}`` → ``{requests}``: one request
    per entry (an object with at least ``name``), sent as one campaign.

    Each of ``requests`` is the entry with the ``key`` its own request carries.
    """
    entries = args.get("to")
    if not isinstance(entries, list) or not all(
            isinstance(entry, dict) and entry.get("name") for entry in entries):
        raise ValueError("request.send_all needs 'to' as a list of objects with a 'name'")
    base = ctx.idempotency_key[:12]
    return {"requests": [{**entry, "key": f"req-{base}-{index}"}
                         for index, entry in enumerate(entries)]}


def remind(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``request.remind: {key, to}`` → ``{key, to}``: the same request, sent again."""
    return {"key": _required(args, "key", "request.remind"),
            "to": _required(args, "to", "request.remind")}


def escalate(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``request.escalate: {to, about, reason, …}`` → ``{ticket, owner, about, reason, …}``:
    a task opened for a person who can chase the answer another way (any further arguments
    are attached to it as they are)."""
    details = {key: value for key, value in args.items() if key != "to"}
    return {"ticket": f"ESC-{ctx.idempotency_key[:8]}",
            "owner": _required(args, "to", "request.escalate"),
            "about": "", "reason": "", **details}


def close_out(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``request.close_out: {parties, winner}`` → ``{withdrawn}``: tell every party but the
    winner that the request is filled (the list of those told)."""
    parties, winner = args.get("parties"), _required(args, "winner", "request.close_out")
    if not isinstance(parties, list):
        raise ValueError(f"request.close_out needs 'parties' as a list, got {parties!r}")
    return {"withdrawn": [party for party in parties if party != winner]}


def submit_declaration(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``customs.submit: {shipment}`` → ``{declaration}``: lodge a customs declaration."""
    return {"declaration": f"DEC-{_required(args, 'shipment', 'customs.submit')}"}


def declaration_status(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``customs.status: {declaration, poll}`` → ``{declaration, status}``.

    The fake broker reports ``lodged``, then ``under_review``, then ``cleared`` from the third
    poll on; it knows which poll it answers from ``poll`` (the flow passes ``loop.index``).
    """
    declaration, poll = _required(args, "declaration", "customs.status"), args.get("poll")
    if isinstance(poll, bool) or not isinstance(poll, int) or poll < 0:
        raise ValueError(f"customs.status needs 'poll' as a count from 0, got {poll!r}")
    status = _CLEARANCE[poll] if poll < len(_CLEARANCE) else "cleared"
    return {"declaration": declaration, "status": status}


def summary(args: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """``report.summary: {attestations}`` → ``{received, late, late_suppliers}``.

    ``attestations`` is the binding of the batch's ``for_each``: one scope per supplier, whose
    ``outcome`` step bound ``{supplier, owner, status}``; ``late_suppliers`` lists
    ``{supplier, owner}`` of those whose status is not ``received``.
    """
    scopes = args.get("attestations")
    if not isinstance(scopes, list):
        raise ValueError(f"report.summary needs 'attestations' as a list, got {scopes!r}")
    outcomes = [scope["outcome"] for scope in scopes]
    late = [{"supplier": each["supplier"], "owner": each["owner"]} for each in outcomes
            if each["status"] != "received"]
    return {"received": len(outcomes) - len(late), "late": len(late), "late_suppliers": late}


def _required(args: dict[str, Any], key: str, action: str) -> Any:
    value = args.get(key)
    if value in (None, ""):
        raise ValueError(f"{action} needs '{key}'")
    return value
