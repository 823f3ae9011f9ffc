"""Reading stored payloads the way mem0's local qdrant store reads them: values by key path,
type-strict equality, whole-word matching, datetimes, expiry."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from typing import Any, Dict, List, Optional


def same(value: Any, other: Any) -> bool:
    """Equality that keeps bool, int and float apart, as qdrant's payload types are."""
    if isinstance(value, bool) != isinstance(other, bool):
        return False
    if isinstance(value, float) != isinstance(other, float):
        return False
    return value == other


def as_utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


_PAYLOAD_DATETIME = re.compile(
    r"^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::(\d{2})(?:\.(\d+))?)?)?"
    r"(?: ?(Z|z|UTC|[+-]\d{2}(?::?\d{2})?))?$"
)


def payload_datetime(text: Any) -> Optional[datetime]:
    """A payload string read as a datetime the way qdrant reads one (naive = UTC, a bare date
    = midnight, a space before the offset allowed, fractions cut to microseconds), or None."""
    if not isinstance(text, str):
        return None
    match = _PAYLOAD_DATETIME.match(text.lstrip())
    if not match:
        return None
    day, hm, seconds, fraction, zone = match.groups()
    if zone is not None and seconds is None and hm is not None:
        return None  # qdrant has no "HH:MM with offset" format
    iso = day + "T" + (hm or "00:00") + ":" + (seconds or "00")
    if fraction:
        iso += "." + (fraction + "000000")[:6]
    if zone and zone not in ("Z", "z", "UTC"):
        zone = zone if ":" in zone or len(zone) == 3 else zone[:3] + ":" + zone[3:]
        iso += zone if len(zone) > 3 else zone + ":00"
    try:
        return as_utc(datetime.fromisoformat(iso))
    except ValueError:
        return None


def words(text: str) -> List[str]:
    return [w.lower() for w in re.findall(r"[^\W_]+", text)]


# -- paths ------------------------------------------------------------------------------------

_SEGMENT = re.compile(r"^([^\[\]]*)((?:\[\d*\])*)$")


def _path(key: str) -> List[Any]:
    parts: List[Any] = []
    for segment in key.split("."):
        match = _SEGMENT.match(segment)
        if not match:
            parts.append(segment)
            continue
        name, brackets = match.groups()
        if name:
            parts.append(name)
        for index in re.findall(r"\[(\d*)\]", brackets):
            parts.append(int(index) if index else "[]")
    return parts


def values_at(payload: Any, key: str) -> Optional[list]:
    """Every value ``key`` selects in ``payload`` (a list value is unwrapped one level), or
    None when it selects nothing."""
    found: list = []

    def walk(data: Any, rest: List[Any]) -> None:
        if not rest:
            if isinstance(data, list):
                found.extend(data)
            else:
                found.append(data)
            return
        head, tail = rest[0], rest[1:]
        if head == "[]":
            if isinstance(data, list):
                for item in data:
                    walk(item, tail)
        elif isinstance(head, int):
            if isinstance(data, list) and head < len(data):
                walk(data[head], tail)
        elif isinstance(data, dict) and head in data:
            walk(data[head], tail)

    walk(payload, _path(key))
    return found or None


def is_expired(payload: Dict[str, Any], today: Optional[date] = None) -> bool:
    """Whether a payload's ``expiration_date`` lies strictly before today (UTC)."""
    stamp = payload.get("expiration_date") if payload else None
    if not stamp:
        return False
    try:
        day = date.fromisoformat(str(stamp))
    except ValueError:
        return False
    return day < (today or datetime.now(timezone.utc).date())
