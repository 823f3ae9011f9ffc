"""Normalisation of the mem0 drop-in differential (driver.py), the same on both sides.

What differs between two correct runs, and how it is handled (docs/parity.md, "mem0"):

- timestamps: checked for the ISO UTC format, then a timestamp of today becomes ``<now>``
  (a caller's ``created_at`` from another day is kept, so backdating is compared); the
  invariants (updated_at >= created_at; one created_at per memory's history) are checked;
- history row ids (random on both sides): ``<hid>``;
- scores: compared by the test with a tolerance of 1e-5 (float32 on both sides);
- equal scores (within 1e-5): search results are compared as ordered groups of equal score,
  a group cut by ``top_k`` as "n of this set" (each side's full set from a read-only rerun
  with top_k=1000); the ``Existing Memories`` of an extraction prompt likewise, as the
  memories scoring above the 10th one plus "n of" those tied with it;
- an ``add(infer=True)`` whose hash dedup would depend on which of several equally scored
  memories fill the 10th neighbour slot is not run (on either side; the same calls before
  it, the same state, so both sides skip it);
- error messages: the class (pydantic's ValidationError and ours FilterValidationError are
  one label), mem0's error_code, whether it is a ValueError, and the message with Python
  set literals sorted; messages of AttributeError, TypeError and filter value errors are not
  compared (the drop-in words them to name the argument; mem0's come from Python internals);
- ``Last k Messages`` lines compared as a multiset; dates in the prompt as ``<today>``; the
  system prompts not at all (the drop-in's instructions are its own words).
"""

import json
import re
from datetime import datetime, timedelta, timezone

import stub

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$")
TIE = 1e-5


def _today():
    return datetime.now(timezone.utc).date().isoformat()


def _ts(value, problems):
    if value is None or not isinstance(value, str):
        return value
    if not TS.match(value):
        if re.match(r"^\d{4}-\d\d-\d\d", value) and value[:10] == _today():
            problems.append(f"timestamp not in ISO UTC form: {value}")
        return value
    moment = datetime.fromisoformat(value)
    if abs(moment - datetime.now(timezone.utc)) < timedelta(days=1):
        return "<now>"
    return value


def _item(d, problems):
    out = {}
    for k, v in d.items():
        out[k] = _ts(v, problems) if k in ("created_at", "updated_at") else v
    if isinstance(d.get("created_at"), str) and isinstance(d.get("updated_at"), str):
        if d["updated_at"] < d["created_at"] and TS.match(d["created_at"]):
            problems.append("updated_at before created_at")
    return out


def result(call, r):
    problems = []
    if isinstance(r, dict) and isinstance(r.get("results"), list):
        r = {**r, "results": [{**_item(x, problems), "_keys": list(x)} for x in r["results"]]}
    elif call["op"] == "history" and isinstance(r, list):
        created = {row.get("created_at") for row in r}
        if len(created) > 1:
            problems.append(f"history rows with different created_at: {sorted(map(str, created))}")
        r = [{**_item(row, problems), "id": "<hid>", "_keys": list(row)} for row in r]
    elif call["op"] == "get" and isinstance(r, dict):
        r = {**_item(r, problems), "_keys": list(r)}
    if problems:
        return {"value": r, "invariants_broken": problems}
    return r


def _sorted_sets(message):
    def repl(m):
        items = sorted(re.findall(r"'[^']*'", m.group(0)))
        return "{" + ", ".join(items) + "}"

    return re.sub(r"\{'[^']*'(?:, '[^']*')*\}", repl, message)


def error(exc):
    kind = type(exc)
    label = kind.__name__
    if kind.__module__.startswith("pydantic") or label == "FilterValidationError":
        label = "FilterValidationError"
    elif label == "ValidationError":
        label = "Mem0ValidationError"
    out = {"error": label, "is_value_error": isinstance(exc, ValueError)}
    if getattr(exc, "error_code", None):
        out["error_code"] = exc.error_code
    if label in ("AttributeError", "TypeError", "FilterValidationError"):
        return out
    message = _sorted_sets(str(exc))
    if message.startswith("Invalid datetime value in range filter"):
        message = message.split(":")[0]
    out["message"] = message
    return out


# -- the extraction context -------------------------------------------------------------------


def _transcript(messages):
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, dict):
        messages = [messages]
    out = ""
    for m in messages:
        if not isinstance(m, dict):
            return None
        role, content = m.get("role"), m.get("content")
        if isinstance(content, list):
            parts = [p.get("text", "") for p in content
                     if isinstance(p, dict) and p.get("type") == "text"]
            if not parts or role == "system":
                continue
            content = " ".join(parts)
        if content is None or role not in ("system", "user", "assistant"):
            continue
        out += f"{role}: {content}\n"
    return out


def existing_context(mem, call):
    """Before an add(infer=True): the stub cosine of every memory of the add's scope to the
    transcript, best first (computed here, in float64, from the stub's embedding)."""
    if not call.get("infer", True) or call.get("memory_type"):
        return None
    text = _transcript(call["messages"])
    if text is None:
        return None
    try:
        listed = mem.get_all(filters=dict(call["scope"]), top_k=10000, show_expired=True)
    except Exception:
        return None
    q = stub.embed(text.replace("\n", " "))
    scored = []
    for item in listed["results"]:
        v = stub.embed(item["memory"].replace("\n", " "))
        scored.append((item["memory"], sum(a * b for a, b in zip(q, v))))
    scored.sort(key=lambda x: -x[1])
    return {"scored": scored, "transcript": text}


def _cut(scored, k=10):
    """(above, tied, taken): the texts scoring above the k-th, those tied with it, and how
    many of the tied ones fill the first k."""
    if len(scored) <= k:
        return [t for t, _ in scored], [], 0
    kth = scored[k - 1][1]
    above = [t for t, s in scored if s > kth + TIE]
    tied = [t for t, s in scored if abs(s - kth) <= TIE]
    return above, tied, k - len(above)


def _predicted_facts(transcript):
    reply = stub.extraction_reply("## New Messages\n" + transcript)
    if not reply:
        return []
    for text in (reply, reply.strip("`").replace("json\n", "", 1)):
        start, end = text.find("{"), text.rfind("}")
        try:
            return [f["text"] for f in json.loads(text[start:end + 1])["memory"]]
        except (ValueError, KeyError, TypeError):
            continue
    return []


def ambiguous_dedup(context):
    """Why an add must not run (its dedup depends on the order of equal scores), or None."""
    if not context:
        return None
    above, tied, taken = _cut(context["scored"])
    if taken >= len(tied):
        return None
    for fact in _predicted_facts(context["transcript"]):
        if fact in tied and fact not in above:
            return (f"dedup of {fact!r} depends on which of {len(tied)} equally scored "
                    f"memories fill the last {taken} of 10 neighbour slots")
    return None


# -- requests ---------------------------------------------------------------------------------


def _existing(section, context):
    try:
        texts = [m["text"] for m in json.loads(section)]
    except (ValueError, KeyError, TypeError):
        return {"raw": section}
    if context is None:
        return {"texts": sorted(texts)}
    above, tied, taken = _cut(context["scored"])
    rest = list(texts)
    for t in above:
        if t not in rest:
            return {"texts": sorted(texts), "unexpected": True}
        rest.remove(t)
    pool = list(tied)
    for t in rest:
        if t not in pool:
            return {"texts": sorted(texts), "unexpected": True}
        pool.remove(t)
    return {"above": sorted(above), "tied": sorted(tied), "taken": len(rest)}


def requests(logged, context, prompt=None):
    out = []
    for entry in logged:
        body = entry["body"]
        if entry["path"].endswith("/embeddings"):
            out.append({"kind": "embed", "input": body.get("input"), "model": body.get("model"),
                        "dimensions": body.get("dimensions"),
                        "encoding_format": body.get("encoding_format")})
            continue
        msgs = body.get("messages", [])
        row = {"kind": "chat", "keys": sorted(body), "model": body.get("model"),
               "temperature": body.get("temperature"), "max_tokens": body.get("max_tokens"),
               "top_p": body.get("top_p"), "response_format": body.get("response_format"),
               "roles": [m.get("role") for m in msgs]}
        user = msgs[1].get("content", "") if len(msgs) > 1 else ""
        if isinstance(user, str) and "## New Messages" in user:
            sections = stub.sections(user)
            row["section_order"] = list(sections)
            row["ends_with_output"] = user.rstrip().endswith("# Output:")
            for name, value in sections.items():
                if name in ("Observation Date", "Current Date"):
                    value = "<today>" if value == _today() else value
                elif name == "Last k Messages":
                    value = sorted(value.split("\n")) if value else []
                elif name == "Existing Memories":
                    value = _existing(value, context)
                row[name] = value
        else:
            row["inner_messages"] = msgs[1:-1]
            # the default instructions are each implementation's own words; a prompt= is not
            row["system"] = msgs[0].get("content") if msgs and prompt else "<default>"
        out.append(row)
    return out


# -- search ties ------------------------------------------------------------------------------


def _groups(items):
    groups = []
    for item in items:
        if groups and abs(groups[-1][-1]["score"] - item["score"]) <= TIE:
            groups[-1].append(item)
        else:
            groups.append([item])
    return groups


def search_groups(mem, call, result, run):
    """Search results as groups of equal score (ids sorted inside a group); the last group,
    when ``top_k`` cut it, as "n of" the whole tied set of a rerun with top_k=1000."""
    items = result["results"]
    groups = _groups(items)
    out = [{"items": sorted(g, key=lambda x: x["id"])} for g in groups]
    if groups and len(items) == call["top_k"]:
        full = run(mem, {**call, "top_k": 1000}, [])["results"]
        last = groups[-1][-1]["score"]
        tied = sorted(x["id"] for x in full if abs(x["score"] - last) <= TIE)
        if len(tied) > len(groups[-1]):
            ids = {x["id"] for x in groups[-1]}
            out[-1] = {"n_of": tied, "n": len(groups[-1]), "within": ids <= set(tied),
                       "score": last}
    return {"groups": out, "count": len(items)}
