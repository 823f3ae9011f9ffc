"""A LangGraph agent whose long-term memory is a memorybench engine: what a user asks it to
remember in one conversation thread, it recalls in another thread, and after a restart.

Offline and deterministic: the embeddings are the in-process MiniLM, and the chat model is
``RecallModel``, a rule-based stand-in with LangChain's chat-model interface (swap in any
real chat model: the graph does not change). Run from the checkout (the embedder's model is
found under .cache/):

    .cache/venv/bin/python py/examples/langgraph_agent.py [STORE_DIR]

The graph has two nodes: ``remember`` saves "Remember that ..." statements as items in the
store's namespace ``("memories", user_id)``; ``respond`` searches that namespace
semantically for the user's message and gives the model the best memories in a system
message. Conversation history lives in a checkpointer, per thread; memories live in the
store, per user, shared by all of the user's threads.
"""

from __future__ import annotations

import re
import sys
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, List, Optional

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime

from memorybench.langchain import MemoryBenchEmbeddings
from memorybench.langgraph import MemoryBenchStore

MEMORY_HEADER = "What you remember about the user:"
_REMEMBER = re.compile(r"^\s*remember\s+(?:that\s+)?(?P<fact>.+?)\s*\.?\s*$", re.IGNORECASE)


@dataclass
class Context:
    """Who the graph is talking to: memories are kept per user."""

    user_id: str


class RecallModel(BaseChatModel):
    """A deterministic chat model for the example: it acknowledges "Remember that ..."
    messages, and answers anything else with the remembered fact (from the system message)
    that shares the most words with the question, or says it does not know."""

    @property
    def _llm_type(self) -> str:
        return "memorybench-recall-example"

    def _generate(
        self, messages: List[BaseMessage], stop: Optional[List[str]] = None, **kwargs: Any
    ) -> ChatResult:
        question = next(m.content for m in reversed(messages) if isinstance(m, HumanMessage))
        facts = [
            line[2:]
            for m in messages
            if isinstance(m, SystemMessage)
            for line in m.content.splitlines()
            if line.startswith("- ")
        ]
        if _REMEMBER.match(question):
            answer = "Noted, I will remember that."
        else:
            overlap = lambda fact: len(_words(fact) & _words(question))
            best = max(facts, key=overlap, default=None)
            answer = f"You told me {best}." if best and overlap(best) else "I don't know yet."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=answer))])


def _words(text: str) -> set:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3}


def build_graph(store: MemoryBenchStore, model: BaseChatModel):
    """The agent: remember, then respond; conversations checkpointed per thread (in
    memory), long-term memories in ``store``."""

    def remember(state: MessagesState, runtime: Runtime[Context]) -> dict:
        """Saves a "Remember that ..." fact in the user's memories (once per fact)."""
        matched = _REMEMBER.match(state["messages"][-1].content)
        if matched:
            fact = matched.group("fact")
            key = str(uuid.uuid5(uuid.NAMESPACE_URL, fact.lower()))
            runtime.store.put(("memories", runtime.context.user_id), key, {"text": fact})
        return {}

    def respond(state: MessagesState, runtime: Runtime[Context]) -> dict:
        """Answers with the user's memories closest to the message in the prompt."""
        query = state["messages"][-1].content
        found = runtime.store.search(("memories", runtime.context.user_id), query=query, limit=3)
        system = SystemMessage("\n".join([MEMORY_HEADER] + [f"- {m.value['text']}" for m in found]))
        return {"messages": [model.invoke([system, *state["messages"]])]}

    graph = StateGraph(MessagesState, context_schema=Context)
    graph.add_node("remember", remember)
    graph.add_node("respond", respond)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "respond")
    graph.add_edge("respond", END)
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def chat(agent, thread: str, user: str, text: str) -> str:
    """One user turn in a thread; prints and returns the agent's answer."""
    result = agent.invoke(
        {"messages": [HumanMessage(text)]},
        config={"configurable": {"thread_id": thread}},
        context=Context(user_id=user),
    )
    answer = result["messages"][-1].content
    print(f"[{thread}] {user}: {text}\n[{thread}] agent: {answer}")
    return answer


def main(path: str) -> List[str]:
    """Two sessions on the store at ``path``, as two runs of a program would be; returns
    the agent's answers."""
    embeddings = MemoryBenchEmbeddings()
    index = {"dims": 384, "embed": embeddings, "fields": ["text"]}
    model = RecallModel()
    answers = []
    with MemoryBenchStore(path=path, index=index) as store:
        agent = build_graph(store, model)
        for fact in ["my favourite colour is teal", "I live in Lisbon"]:
            answers.append(chat(agent, "thread-1", "alice", f"Remember that {fact}."))
        answers.append(chat(agent, "thread-2", "alice", "What is my favourite colour?"))
    print("-- engine closed; a new session opens it again --")
    with MemoryBenchStore(path=path, index=index) as store:
        agent = build_graph(store, model)  # a fresh checkpointer: no conversation carried over
        answers.append(chat(agent, "thread-3", "alice", "Which city do I live in?"))
        answers.append(chat(agent, "thread-4", "bob", "What is my favourite colour?"))
    return answers


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as scratch:
            main(f"{scratch}/store")
