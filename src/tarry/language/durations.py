"""Durations and instants as flows write them.

Durations: ``500ms``, ``30s``, ``15m``, ``24h``, ``2d``, ``1w``, compounds (``1h30m``) and ISO
8601 (``PT30S``, ``P2D``, ``P1W``). Months and years are refused: their length is ambiguous.
No duration is longer than :data:`MAX_DURATION` (about 100 years), so any instant a wait
computes from now stays far inside what a date can hold.

Instants: ISO 8601 date-times with a zone (``Z`` or ``+02:00``). A zone-less date-time is
refused unless a default zone is given (a flow's ``timezone:``). Impossible dates and times
(``2026-02-31``, ``T24:00:00``) are refused, never rolled over.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tarry._text import clip

__all__ = ["MAX_DURATION", "check_duration", "format_duration",
           "looks_like_duration", "parse_duration", "parse_instant", "parse_zone"]


def _cut(text: str) -> str:
    """What a message quotes of a refused text: its first 60 characters (a computed one may
    be a megabyte)."""
    return clip(text, 60)


MAX_DURATION = timedelta(days=36_525)
"""The longest duration tarry accepts: 100 years of 365.25 days (5217w6d)."""

_MAX_MILLIS = MAX_DURATION // timedelta(milliseconds=1)

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000,
             "w": 604_800_000}
_SHORT = re.compile(r"(?:(\d+)(ms|s|m|h|d|w))")
_SHORT_WHOLE = re.compile(r"(?:\d+(?:ms|s|m|h|d|w))+")
_ISO = re.compile(
    r"P(?!$)(?:(?P<y>\d+)Y)?(?:(?P<mo>\d+)M)?(?:(?P<w>\d+)W)?(?:(?P<d>\d+)D)?"
    r"(?:T(?=\d)(?:(?P<h>\d+)H)?(?:(?P<mi>\d+)M)?(?:(?P<s>\d+(?:\.\d+)?)S)?)?"
)
_ISO_UNITS = (("w", "w"), ("d", "d"), ("h", "h"), ("mi", "m"), ("s", "s"))
_MAX_DIGITS = 30  # more digits than any count within MAX_DURATION, even in milliseconds
_INSTANT = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)"
    r"(?P<zone>Z|z|[+-]\d{2}:?\d{2})?"
)


def parse_duration(text: str) -> timedelta:
    """Parse a duration; raise ``ValueError`` with a user-facing message when invalid."""
    raw = text.strip()
    if _SHORT_WHOLE.fullmatch(raw):
        return _bounded(text, sum(_count(n, text) * Decimal(_UNITS_MS[u])
                                  for n, u in _SHORT.findall(raw)))
    iso = _ISO.fullmatch(raw.upper())
    if iso:
        if iso["y"] or iso["mo"]:
            raise ValueError(f"duration '{_cut(text)}' uses months or years, whose length "
                             "is ambiguous; use days or weeks")
        return _bounded(text, sum(_count(iso[part], text) * Decimal(_UNITS_MS[unit])
                                  for part, unit in _ISO_UNITS if iso[part]))
    if re.fullmatch(r"\d+(mo|y|M|Y)", raw):
        raise ValueError(f"duration '{_cut(text)}' uses months or years, whose length is "
                         "ambiguous; use days or weeks")
    raise ValueError(f"'{_cut(text)}' is not a duration (use e.g. 500ms, 30s, 15m, 24h, 2d, "
                     "1w, 1h30m or ISO 8601 like PT30S)")


def looks_like_duration(text: str) -> bool:
    """Whether ``text`` is spelled as a duration (it may still be refused: too long, or in
    months)."""
    raw = text.strip()
    return bool(_SHORT_WHOLE.fullmatch(raw) or _ISO.fullmatch(raw.upper()))


def check_duration(delta: timedelta, text: str | None = None) -> timedelta:
    """``delta`` itself when it is at most :data:`MAX_DURATION` long, else ``ValueError``.

    ``text`` is how the duration was written, for the message.
    """
    if abs(delta) > MAX_DURATION:
        shown = text if text is not None else format_duration(delta)
        raise ValueError(f"duration '{clip(shown)}' is longer than 100 years (36525d), the "
                         "longest tarry accepts")
    return delta


def _count(digits: str, text: str) -> Decimal:
    """One number of a duration; one too long to be a sensible count is refused as such."""
    if len(digits) > _MAX_DIGITS:
        check_duration(timedelta.max, text)
    return Decimal(digits)


def _bounded(text: str, millis: Decimal | int) -> timedelta:
    """The duration of ``millis`` milliseconds, refused when beyond the maximum."""
    if millis > _MAX_MILLIS:
        check_duration(timedelta.max, text)
    return timedelta(microseconds=int(millis * 1000))



def format_duration(delta: timedelta) -> str:
    """The shortest compound spelling of ``delta`` (``1h30m``, ``2d``, ``500ms``)."""
    millis = delta // timedelta(milliseconds=1)
    if millis == 0:
        return "0s"
    sign, millis = ("-", -millis) if millis < 0 else ("", millis)
    parts = []
    for unit in ("w", "d", "h", "m", "s", "ms"):
        count, millis = divmod(millis, _UNITS_MS[unit])
        if count:
            parts.append(f"{count}{unit}")
    return sign + "".join(parts)


def parse_zone(name: str) -> ZoneInfo:
    """The IANA zone ``name``; raise ``ValueError`` when unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone '{name}' (use an IANA name such as "
                         "Europe/Berlin)") from None


def parse_instant(text: str, default_zone: str | None = None) -> datetime:
    """Parse an ISO 8601 instant into an aware UTC datetime.

    A zone-less value is read in ``default_zone`` when given, else refused.
    """
    raw = text.strip()
    found = _INSTANT.fullmatch(raw)
    if not found:
        raise ValueError(f"'{_cut(text)}' is not an ISO 8601 instant "
                         "(e.g. 2026-09-01T09:00:00Z)")
    try:
        local = datetime.fromisoformat(f"{found['date']}T{found['time']}")
    except ValueError as exc:
        raise ValueError(f"'{_cut(text)}' is not a real date and time ({exc})") from None
    zone = found["zone"]
    if zone:
        aware = local.replace(tzinfo=_offset(zone, text))
    elif default_zone:
        aware = _in_zone(local, default_zone, text)
    else:
        raise ValueError(f"instant '{_cut(text)}' has no timezone; add 'Z' or an offset such "
                         "as +02:00, or declare the flow's 'timezone'")
    return aware.astimezone(UTC)


def _offset(zone: str, text: str) -> timezone:
    """The fixed offset ``Z``, ``+02:00`` or ``+0200``; out-of-range parts are refused."""
    if zone in "Zz":
        return UTC
    digits = zone[1:].replace(":", "")
    hours, minutes = int(digits[:2]), int(digits[2:])
    if hours > 23 or minutes > 59:
        raise ValueError(f"'{_cut(text)}' has an impossible UTC offset '{zone}'")
    sign = -1 if zone[0] == "-" else 1
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _in_zone(local: datetime, name: str, text: str) -> datetime:
    """``local`` read in the IANA zone ``name``.

    A wall time the clocks skip (a daylight-saving gap) is refused; a wall time that occurs
    twice (clocks going back) is read as its first occurrence.
    """
    zone = parse_zone(name)
    aware = local.replace(tzinfo=zone)
    if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != local:
        raise ValueError(f"'{_cut(text)}' does not exist in {name} (the clocks skip that time)")
    return aware
