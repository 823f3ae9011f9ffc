"""mem0's filter language, evaluated on stored payloads (the JSON dict of each memory).

A filter dict is an AND of conditions, one per key:

- ``{"k": v}``: exact match; type-strict (``"3"`` is not ``3``, ``3`` is not ``3.0``, ``True``
  is not ``1``); an exact match on a float, ``None`` or a tuple is refused
  (:class:`FilterValidationError`); on a list payload any element may match.
- ``{"k": [a, b]}``: any of the values (``in``); ``{"k": "*"}``: no condition at all.
- ``{"k": {op: v}}`` with op in ``eq ne in nin gt gte lt lte contains icontains``. ``ne`` and
  ``nin`` do not match a payload without the key. Range bounds are numbers (bools excluded
  from the payload side), or, when every bound is an ISO date/datetime string, a datetime
  range (naive means UTC). ``contains`` and ``icontains`` both ask every word of the value to
  be a whole word of the payload string, ignoring case.
- ``AND`` / ``OR`` / ``NOT``: lists of filter dicts (``$and``, ``$or``, ``$not`` too).
- Dotted keys reach into nested dicts; ``a[]`` and ``a[0]`` into lists.

:func:`compile_filter` builds a predicate as mem0's local qdrant store does (what ``get_all``
uses directly); ``search`` first runs :func:`prepare_search_filters`, mem0's pre-pass, which
flattens ``AND`` lists into the top level (so in search ``{"AND": [{"c": "red"}, {"c":
"blue"}]}`` keeps only ``c == "blue"``) and refuses unknown operators earlier, with another
message. Both quirks are mem0's and are kept.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Callable, Dict, List, Optional

from .errors import FilterValidationError
from .payload import as_utc, payload_datetime, same, values_at, words

OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
RANGE_OPS = ("gt", "gte", "lt", "lte")
LOGICAL = ("AND", "OR", "NOT")
SCOPE_KEYS = ("user_id", "agent_id", "run_id")

Predicate = Callable[[Dict[str, Any]], bool]

# -- the search pre-pass ---------------------------------------------------------------------


def _is_advanced(filters: Dict[str, Any]) -> bool:
    for key, value in filters.items():
        if key in LOGICAL:
            return True
        if isinstance(value, dict) and any(op in OPERATORS for op in value):
            return True
        if _is_wildcard(value):
            return True
    return False


def _is_wildcard(value: Any) -> bool:
    return isinstance(value, str) and value == "*"


def _condition(key: str, condition: Any) -> Dict[str, Any]:
    if not isinstance(condition, dict):
        return {key: condition}
    out: Dict[str, Any] = {}
    for op, value in condition.items():
        if op not in OPERATORS:
            raise ValueError(f"Unsupported metadata filter operator: {op}")
        out.setdefault(key, {})[op] = value
    return out


def _merge(target: Dict[str, Any], source: Dict[str, Any]) -> None:
    for key, value in source.items():
        if key in target and isinstance(target[key], dict) and isinstance(value, dict):
            target[key].update(value)
        else:
            target[key] = value


def _merged(conditions: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if not isinstance(conditions, dict):
        raise AttributeError(
            f"a condition of AND/OR/NOT must be a dict, got {type(conditions).__name__}"
        )
    for sub_key, sub_value in conditions.items():
        _merge(out, _condition(sub_key, sub_value))
    return out


def prepare_search_filters(filters: Dict[str, Any]) -> Dict[str, Any]:
    """The filters ``search`` hands to the store (mem0's pre-pass, which only runs when some
    key is AND/OR/NOT, holds a known operator, or is ``"*"``)."""
    if not _is_advanced(filters):
        return filters
    processed: Dict[str, Any] = {}
    for key, value in filters.items():
        if key == "AND":
            if not isinstance(value, list):
                raise ValueError("AND operator requires a list of conditions")
            for condition in value:
                _merge(processed, _merged(condition))
        elif key in ("OR", "NOT"):
            if not isinstance(value, list) or not value:
                raise ValueError(f"{key} operator requires a non-empty list of conditions")
            processed["$" + key.lower()] = [_merged(condition) for condition in value]
        else:
            _merge(processed, _condition(key, value))
    out = dict(filters)
    for key in LOGICAL:
        out.pop(key, None)
    for key in list(out):
        if key not in SCOPE_KEYS and isinstance(out[key], dict):
            del out[key]
    out.update(processed)
    return out


# -- values -----------------------------------------------------------------------------------


def _exact_value(value: Any, key: str) -> Any:
    if isinstance(value, (bool, int, str)):
        return value
    raise FilterValidationError(
        f"filter value for {key!r} must be a str, int or bool for an exact match, "
        f"got {type(value).__name__} {value!r}"
    )


def _value_list(values: Any, key: str, op: str) -> list:
    if not isinstance(values, (list, tuple, set, frozenset)):
        raise FilterValidationError(
            f"filter {op!r} on {key!r} needs a list, got {type(values).__name__} {values!r}"
        )
    values = list(values)
    if all(isinstance(v, str) for v in values):
        return values
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return values
    raise FilterValidationError(
        f"filter {op!r} on {key!r} needs a list of only strings or only integers, got {values!r}"
    )


_ISO_BOUND = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$"
)


def _bound_datetime(text: str, key: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"Invalid datetime value in range filter for field '{key}': {text!r} ({exc})"
        ) from exc
    return as_utc(moment)


def _float_bound(value: Any, key: str) -> float:
    if isinstance(value, (bool, int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise FilterValidationError(
        f"range bound for {key!r} must be a number or an ISO date/datetime string, got {value!r}"
    )


# -- compiling --------------------------------------------------------------------------------


def _field(key: str, test: Callable[[Any], bool]) -> Predicate:
    def check(payload: Dict[str, Any]) -> bool:
        values = values_at(payload, key)
        return values is not None and any(test(v) for v in values)

    return check


def _range_condition(key: str, spec: Dict[str, Any]) -> Predicate:
    bounds = {op: spec[op] for op in RANGE_OPS if op in spec}
    if all(isinstance(v, str) and _ISO_BOUND.match(v) for v in bounds.values()):
        limits = {op: _bound_datetime(v, key) for op, v in bounds.items()}
        read: Callable[[Any], Any] = payload_datetime
    else:
        limits = {op: _float_bound(v, key) for op, v in bounds.items()}

        def read(value: Any) -> Any:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            return value

    def test(value: Any) -> bool:
        point = read(value)
        if point is None:
            return False
        return (
            ("lt" not in limits or point < limits["lt"])
            and ("lte" not in limits or point <= limits["lte"])
            and ("gt" not in limits or point > limits["gt"])
            and ("gte" not in limits or point >= limits["gte"])
        )

    return _field(key, test)


def _text_condition(key: str, text: Any) -> Predicate:
    if not isinstance(text, str):
        raise FilterValidationError(
            f"contains/icontains on {key!r} needs a string, got {type(text).__name__} {text!r}"
        )
    wanted = words(text)

    def test(value: Any) -> bool:
        if not isinstance(value, str) or not wanted:
            return False
        have = set(words(value))
        return all(w in have for w in wanted)

    return _field(key, test)


def _field_condition(key: str, value: Any) -> Optional[Predicate]:
    if not isinstance(value, dict):
        if _is_wildcard(value):
            return None
        if isinstance(value, list):
            options = _value_list(value, key, "in")
            return _field(key, lambda v: any(same(v, o) for o in options))
        wanted = _exact_value(value, key)
        return _field(key, lambda v: same(v, wanted))
    ops = set(value)
    ranged = ops & set(RANGE_OPS)
    if ranged:
        others = ops - set(RANGE_OPS)
        if others:
            raise ValueError(
                f"Cannot mix range operators ({ranged}) with non-range operators ({others}) "
                f"for field '{key}'. Use AND to combine them as separate conditions."
            )
        return _range_condition(key, value)
    if "eq" in value:
        wanted = _exact_value(value["eq"], key)
        return _field(key, lambda v: same(v, wanted))
    if "ne" in value:
        unwanted = _value_list([value["ne"]], key, "ne")
        return _field(key, lambda v: v is not None and not any(same(v, u) for u in unwanted))
    if "in" in value:
        options = _value_list(value["in"], key, "in")
        return _field(key, lambda v: any(same(v, o) for o in options))
    if "nin" in value:
        unwanted = _value_list(value["nin"], key, "nin")
        return _field(key, lambda v: v is not None and not any(same(v, u) for u in unwanted))
    if "contains" in value or "icontains" in value:
        return _text_condition(key, value["icontains" if "icontains" in value else "contains"])
    raise ValueError(
        f"Unsupported filter operator(s) for field '{key}': {ops}. "
        f"Supported operators: {set(OPERATORS)}"
    )


def compile_filter(filters: Optional[Dict[str, Any]]) -> Optional[Predicate]:
    """A predicate over payloads for ``filters``, or None when it sets no condition."""
    if not filters:
        return None
    renamed = {"$or": "OR", "$not": "NOT", "$and": "AND"}
    keyed: Dict[str, Any] = {}
    for key, value in filters.items():
        keyed.setdefault(renamed.get(key, key), value)
    must: List[Predicate] = []
    should: List[Predicate] = []
    must_not: List[Predicate] = []
    for key, value in keyed.items():
        if key in LOGICAL:
            if not isinstance(value, list):
                raise ValueError(
                    f"{key} filter value must be a list of filter dicts, got {type(value).__name__}"
                )
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    raise ValueError(
                        f"{key} filter list item at index {i} must be a dict, "
                        f"got {type(item).__name__}: {item!r}"
                    )
            target = {"AND": must, "OR": should, "NOT": must_not}[key]
            for item in value:
                built = compile_filter(item)
                if built is not None:
                    target.append(built)
        else:
            built = _field_condition(key, value)
            if built is not None:
                must.append(built)
    if not (must or should or must_not):
        return None

    def check(payload: Dict[str, Any]) -> bool:
        if not all(p(payload) for p in must):
            return False
        if any(p(payload) for p in must_not):
            return False
        return not should or any(p(payload) for p in should)

    return check


def engine_scope(filters: Dict[str, Any]) -> Dict[str, str]:
    """The scope equalities every match must satisfy (top-level user_id, agent_id, run_id
    with a plain string value): the engine narrows candidates by these attributes first."""
    return {
        key: filters[key]
        for key in SCOPE_KEYS
        if isinstance(filters.get(key), str) and filters[key] != "*"
    }
