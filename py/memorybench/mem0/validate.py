"""Argument checks of the mem0 API, with mem0 2.2.1's error classes and messages, and the
size bounds of the drop-in (which mem0 does not have)."""

from __future__ import annotations

import json
import logging
from copy import deepcopy
from datetime import date, datetime, timezone
from typing import Any, Dict, List, Optional, Tuple

from .errors import ValidationError

logger = logging.getLogger(__name__)

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
IDENTITY_KEYS = frozenset(SCOPE_KEYS) | {"actor_id"}
MAX_TOP_K = 10_000
MAX_TEXT_CHARS = 4 << 20
MAX_ID_CHARS = 4096
MAX_METADATA_BYTES = 4 << 20


def scope_id(value: Any, name: str) -> Optional[str]:
    """A scope id trimmed (non-strings are turned into strings first, as mem0 does); blank or
    holding whitespace is refused."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value)
    value = value.strip()
    if value == "":
        raise ValueError(
            f"Invalid {name}: cannot be empty or whitespace-only. Provide a valid identifier."
        )
    if any(c.isspace() for c in value):
        raise ValueError(
            f"Invalid {name}: cannot contain whitespace. Provide a valid identifier without spaces."
        )
    if len(value) > MAX_ID_CHARS:
        raise ValueError(f"Invalid {name}: longer than {MAX_ID_CHARS} characters.")
    return value


def scope_in_filters(filters: Any, method: str) -> Dict[str, Any]:
    """The filters of search/get_all with their scope ids trimmed; at least one is needed."""
    if filters is not None and not isinstance(filters, dict):
        raise TypeError(f"{method}(): filters must be a dict, got {type(filters).__name__}")
    out = dict(filters) if filters else {}
    for key in SCOPE_KEYS:
        if key in out:
            out[key] = scope_id(out[key], key)
    if not any(key in out for key in SCOPE_KEYS):
        raise ValueError(
            "filters must contain at least one of: user_id, agent_id, run_id. "
            "Example: filters={'user_id': 'u1'}"
        )
    return out


def no_null_scope(filters: Dict[str, Any]) -> None:
    for key in SCOPE_KEYS:
        if key in filters and filters[key] is None:
            raise AttributeError(f"filters[{key!r}] is None: give an id (or leave the key out)")


def reject_top_level(kwargs: Dict[str, Any], method: str) -> None:
    given = frozenset(SCOPE_KEYS) & set(kwargs)
    if given:
        raise ValueError(
            f"Top-level entity parameters {given} are not supported in {method}(). "
            "Use filters={'user_id': '...'} instead."
        )


def search_params(threshold: Any = None, top_k: Any = None) -> None:
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise ValueError("threshold must be a valid number")
        if threshold < 0 or threshold > 1:
            raise ValueError(
                f"Invalid threshold: {threshold}. Must be between 0 and 1 (inclusive)."
            )
    if top_k is not None:
        if not isinstance(top_k, int) or isinstance(top_k, bool):
            raise ValueError("top_k must be a valid integer")
        if top_k < 0:
            raise ValueError(f"Invalid top_k: {top_k}. Must be a non-negative integer.")
        if top_k > MAX_TOP_K:
            raise ValueError(
                f"Invalid top_k: {top_k}. memorybench.mem0 allows at most {MAX_TOP_K}."
            )


def query(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("Invalid query: must be a non-empty string.")
    value = value.strip()
    if not value:
        raise ValueError("Invalid query: cannot be empty or whitespace-only.")
    text(value, "query")
    return value


def text(value: Any, where: str) -> str:
    """A text to embed and store: a str (mem0 fails with AttributeError on anything else) of
    at most MAX_TEXT_CHARS characters."""
    if not isinstance(value, str):
        raise AttributeError(f"{where} must be a str, got {type(value).__name__}")
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"{where} is longer than {MAX_TEXT_CHARS} characters")
    return value


def expiration(value: Any) -> Optional[str]:
    """An expiration date as ``YYYY-MM-DD`` (from a str, date or datetime)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError as exc:
            raise ValueError("expiration_date must be a valid date in YYYY-MM-DD format.") from exc
    raise ValueError("expiration_date must be a date string in YYYY-MM-DD format.")


def metadata(value: Any, where: str = "metadata") -> Dict[str, Any]:
    """A copy of caller metadata, which must be a dict of JSON values with string keys."""
    if not isinstance(value, dict):
        raise AttributeError(f"{where} must be a dict, got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"{where} keys must be strings, got {key!r}")
        try:
            json.dumps(item, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{where}[{key!r}] is not a JSON value ({exc})") from exc
    if len(json.dumps(value)) > MAX_METADATA_BYTES:
        raise ValueError(f"{where} is larger than {MAX_METADATA_BYTES} bytes as JSON")
    return deepcopy(value)


def strip_identity(meta: Dict[str, Any], existing: Dict[str, Any], context: str) -> Dict[str, Any]:
    """Caller metadata without user_id, agent_id, run_id and actor_id (scope is set by the
    arguments, never by metadata); a dropped key that differs from ``existing`` is logged."""
    clean = {}
    for key, value in meta.items():
        if key not in IDENTITY_KEYS:
            clean[key] = value
        elif value != existing.get(key):
            logger.warning("%s: ignoring metadata[%r]: identity fields cannot be set through "
                           "metadata", context, key)
    return clean


def scope_and_metadata(
    user_id: Any, agent_id: Any, run_id: Any, meta: Any
) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """(payload template, scope filters) of an ``add``."""
    base = strip_identity(metadata(meta), {}, "add()") if meta else {}
    ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    scope: Dict[str, str] = {}
    for key in SCOPE_KEYS:
        value = scope_id(ids[key], key)
        if value:
            base[key] = value
            scope[key] = value
    if not scope:
        raise ValidationError(
            "At least one of 'user_id', 'agent_id', or 'run_id' must be provided.",
            "VALIDATION_001",
            details={"provided_ids": {"user_id": None, "agent_id": None, "run_id": None}},
            suggestion="Please provide at least one identifier to scope the memory operation.",
        )
    return base, scope


def message_list(messages: Any) -> List[Any]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    if isinstance(messages, dict):
        return [messages]
    if not isinstance(messages, list):
        raise ValidationError(
            "messages must be str, dict, or list[dict]",
            "VALIDATION_003",
            details={"provided_type": type(messages).__name__,
                     "valid_types": ["str", "dict", "list[dict]"]},
            suggestion="Convert your input to a string, dictionary, or list of dictionaries.",
        )
    return messages


def text_messages(messages: List[Any]) -> List[Dict[str, Any]]:
    """Messages with text content: a list of content parts becomes its text parts joined by
    spaces (none: the message is dropped), image parts and messages without content are
    dropped; system messages are kept as they are."""
    out: List[Dict[str, Any]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise AttributeError(f"messages[{i}] must be a dict, got {type(message).__name__}")
        role, content = message.get("role"), message.get("content")
        if role == "system":
            out.append(message)
        elif content is None:
            continue
        elif isinstance(content, list):
            parts = [
                str(part.get("text", "")) for part in content
                if isinstance(part, dict) and part.get("type") == "text"
            ]
            if parts:
                out.append({"role": role, "content": " ".join(parts)})
        elif isinstance(content, dict) and content.get("type") == "image_url":
            continue
        else:
            out.append(message)
    return out


def utc_iso(stamp: Any) -> Any:
    """An aware ISO timestamp moved to UTC; anything else unchanged."""
    if not stamp or not isinstance(stamp, str):
        return stamp
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        return stamp
    return moment.astimezone(timezone.utc).isoformat()
