"""The fact-extraction exchange of ``add(infer=True)``: the prompts, reading the reply, and
the offline chat model.

The user prompt has mem0 2.x's layout (``## Summary``, ``## Last k Messages``, ``## Recently
Extracted Memories``, ``## Existing Memories``, ``## New Messages``, ``## Observation Date``,
``## Current Date``, optionally ``## Custom Instructions``, then ``# Output:``) so that a model
prompted for mem0 reads it the same way; the instructions themselves are memorybench's own
words. The expected reply is ``{"memory": [{"id": "0", "text": "...", "attributed_to":
"user"}]}``; only ``text`` and ``attributed_to`` are used.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Dict, List, Optional

logger = logging.getLogger(__name__)

HISTORY_TRUNCATION = 300

EXTRACTION_SYSTEM_PROMPT = """\
You keep the long-term memory of an assistant. From a conversation you pick out the facts \
that will still be worth knowing in later conversations and write each one as a short, \
self-contained statement.

What counts: the user's preferences, plans, relationships, possessions, work, health, \
opinions and anything they ask to be remembered; decisions and commitments; concrete \
details (names, places, dates, amounts). What does not: greetings, thanks, small talk, \
questions without an answer, and the assistant's own pleasantries or offers of help.

How to write each fact:
- one fact per entry, in the user's language, in the third person or first person as the \
user said it, resolving "today" or "tomorrow" against the dates given below;
- keep it faithful: never add what was not said;
- skip a fact when it is already among the existing memories with the same meaning;
- set "attributed_to" to "user" for what the user said about themselves and "assistant" \
for what the assistant said or did.

The sections below give the running summary, the last messages of this conversation, the \
memories already stored that look related (each with a temporary id), the new messages to \
read, and the dates. Only the new messages are a source of new facts; the rest is context.

Answer with one JSON object and nothing else:
{"memory": [{"id": "0", "text": "<fact>", "attributed_to": "user"}, ...]}
Number the ids "0", "1", ... in order. When nothing is worth keeping, answer {"memory": []}.
"""

AGENT_SCOPE_PARAGRAPH = """
These memories belong to an agent rather than to a user: also keep what the assistant \
learned, decided or committed to about its own behaviour, and still set "attributed_to" to \
where each fact came from ("user" or "assistant").
"""

PROCEDURAL_SYSTEM_PROMPT = """\
You write the procedural memory of an agent: a complete, ordered record of what it did so \
that it can resume the task without asking again. Start with the task's objective and how \
far it got. Then list every step in order, each with the action taken (with its parameters), \
its result quoted exactly as it came back (data, errors, URLs, numbers), what was learned \
from it and what the agent planned next. Never paraphrase a result. Output only the record.
"""

PROCEDURAL_REQUEST = "Write the procedural memory of everything above."


def transcript(messages: List[Dict[str, Any]]) -> str:
    """``role: content`` lines of the system, user and assistant messages that have content."""
    out = ""
    for message in messages:
        content = message.get("content")
        role = message.get("role")
        if content is None or role not in ("system", "user", "assistant"):
            continue
        out += f"{role}: {content}\n"
    return out


def _history(messages: List[Dict[str, Any]]) -> str:
    out = ""
    for message in messages:
        role, content = message.get("role") or "", message.get("content") or ""
        if role and content:
            content = str(content)
            if len(content) > HISTORY_TRUNCATION:
                content = content[:HISTORY_TRUNCATION] + "..."
            out += f"{role}: {content}\n"
    return out


def extraction_prompt(
    *,
    existing: List[Dict[str, str]],
    new_messages: str,
    last_messages: List[Dict[str, Any]],
    today: str,
    custom_instructions: Optional[str] = None,
) -> str:
    sections = [
        "## Summary\n",
        "## Last k Messages\n" + _history(last_messages),
        "## Recently Extracted Memories\n[]",
        "## Existing Memories\n" + json.dumps(existing, ensure_ascii=False),
        "## New Messages\n" + new_messages,
        "## Observation Date\n" + today,
        "## Current Date\n" + today,
    ]
    if custom_instructions:
        sections.append("## Custom Instructions\n" + custom_instructions)
    sections.append("# Output:")
    return "\n\n".join(sections)


_FENCED = re.compile(r"^```[a-zA-Z0-9]*\n([\s\S]*?)\n```$")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_ANY_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


def strip_fence(reply: Any) -> str:
    """The reply without an enclosing code fence and without ``<think>`` blocks."""
    if not isinstance(reply, str):
        return ""
    text = reply.strip()
    match = _FENCED.match(text)
    text = match.group(1).strip() if match else text
    return _THINK.sub("", text).strip()


def parse_facts(reply: Any) -> List[Dict[str, Any]]:
    """The ``memory`` entries of an extraction reply (a JSON object, possibly fenced or with
    prose around it); anything unreadable gives no facts (logged, as mem0 does)."""
    text = strip_fence(reply)
    if not text:
        return []
    try:
        data = json.loads(text, strict=False)
    except ValueError:
        fenced = _ANY_FENCE.search(text)
        if fenced:
            candidate = fenced.group(1)
        else:
            start, end = text.find("{"), text.rfind("}")
            candidate = text[start : end + 1] if 0 <= start < end else text
        try:
            data = json.loads(candidate, strict=False)
        except ValueError as exc:
            logger.error("extraction reply is not JSON (%s): %.200s", exc, text)
            return []
    entries = data.get("memory", []) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        logger.error("extraction reply has no 'memory' list: %.200s", text)
        return []
    return [entry for entry in entries if isinstance(entry, dict)]


# -- the offline model ------------------------------------------------------------------------

_PLEASANTRIES = set(
    """hi hello hey hiya yo thanks thank you ok okay sure great cool nice good morning evening
    afternoon night bye goodbye see later please welcome yes no yeah yep nope alright fine
    awesome perfect wonderful lol haha glad help happy to assist how can i may there anything
    else what do for today so much very really a lot all set got it noted sounds""".split()
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_ROLE_LINE = re.compile(r"^(system|user|assistant): ", re.M)


def _sections(prompt: str) -> Dict[str, str]:
    out: Dict[str, List[str]] = {}
    current = None
    for line in prompt.split("\n"):
        if line.startswith("## "):
            current = line[3:].strip()
            out[current] = []
        elif line.startswith("# "):
            current = None
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v).strip("\n") for k, v in out.items()}


def offline_facts(new_messages: str) -> List[str]:
    """The user's statements in a transcript, sentence by sentence: no questions, no
    greetings or thanks, nothing the assistant said."""
    facts: List[str] = []
    pieces = _ROLE_LINE.split(new_messages)
    # pieces: [before, role, content, role, content, ...]
    for role, content in zip(pieces[1::2], pieces[2::2]):
        # a user message may itself be a pasted transcript ("assistant: Welcome!")
        inner = re.match(r"^\s*(system|user|assistant):\s*", content)
        while inner and role == "user":
            role, content = inner.group(1), content[inner.end():]
            inner = re.match(r"^\s*(system|user|assistant):\s*", content)
        if role != "user":
            continue
        for sentence in _SENTENCE_END.split(content.strip()):
            sentence = sentence.strip().rstrip(".;!").strip()
            words = re.findall(r"[^\W_]+", sentence.lower())
            if len(words) < 2 or sentence.endswith("?"):
                continue
            if all(w in _PLEASANTRIES for w in words):
                continue
            if sentence not in facts:
                facts.append(sentence)
    return facts


class OfflineChat:
    """A chat model that needs no network: for an extraction prompt it keeps each statement
    the user made (see :func:`offline_facts`); for a procedural-memory request it lists the
    messages in order. Deterministic; not a language model."""

    identity = "memorybench:offline"

    def chat(self, messages: List[Dict[str, Any]], response_format: Optional[dict] = None) -> str:
        user = next((m.get("content") for m in messages if m.get("role") == "user"), "") or ""
        if isinstance(user, str) and "## New Messages" in user:
            facts = offline_facts(_sections(user).get("New Messages", ""))
            memory = [
                {"id": str(i), "text": text, "attributed_to": "user"}
                for i, text in enumerate(facts)
            ]
            return json.dumps({"memory": memory}, ensure_ascii=False)
        steps = [
            f"{i}. {m.get('role')}: {m.get('content')}"
            for i, m in enumerate(
                (m for m in messages[1:-1] if m.get("role") != "system"), start=1
            )
        ]
        return "\n".join(steps)
