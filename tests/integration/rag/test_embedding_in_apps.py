"""apiatlas inside other LangChain/LangGraph apps: its tools in a `create_agent` agent, the
compiled agent as a subgraph with a checkpointer, streaming, and the retrievers in LCEL.

The chat models are LangChain's fakes (the only external part); the atlas is the real embedded
one over the sample API.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from collections.abc import Iterator, Sequence
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.graph import END, START, StateGraph

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import ConfigError, UsageError
from apiatlas.rag.agent.context import MAX_K, AgentContext
from apiatlas.rag.agent.serde import SERDE_ALLOWLIST, checkpoint_serde
from apiatlas.rag.agent.state import AgentState
from tests.integration.conftest import SampleHome
from apiatlas.tools import FoundEndpoints, make_tools

QUESTION = "Which call creates a new location?"
ROUTE = ["memory", "analyse", "knowledge_graph", "rank", "review", "compose"]


@pytest.fixture(scope="module")
def atlas(sample_home: SampleHome) -> Iterator[ApiAtlas]:
    with ApiAtlas(Settings(home=sample_home.home, project=sample_home.project)) as atlas:
        yield atlas


class ToolCallingFake(FakeMessagesListChatModel):
    """A scripted chat model that accepts tools and records every prompt it was sent."""

    seen: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ToolCallingFake:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def test_tools_have_names_descriptions_and_schemas(atlas: ApiAtlas) -> None:
    tools = {t.name: t for t in make_tools(atlas)}
    assert set(tools) == {"find_endpoints", "search_docs", "ask", "remember"}
    for tool in tools.values():
        assert isinstance(tool, BaseTool) and len(tool.description) > 60
    [number] = [t for t in tools["find_endpoints"].args["k"]["anyOf"] if t["type"] == "integer"]
    assert number["maximum"] == MAX_K == 50  # or null: five in full and the next five named
    assert "question" in tools["find_endpoints"].tool_call_schema.model_json_schema()["required"]
    with pytest.raises(ValueError):  # the schema refuses what the model must not send
        tools["find_endpoints"].invoke({"question": QUESTION, "k": 500})


def test_a_create_agent_model_calls_find_endpoints_and_reads_its_output(atlas: ApiAtlas) -> None:
    call = {"name": "find_endpoints", "args": {"question": QUESTION, "k": 3}, "id": "call-1"}
    model = ToolCallingFake(
        responses=[AIMessage("", tool_calls=[call]), AIMessage("Use POST /v2/locations.")],
        seen=[],
    )
    agent = create_agent(model, tools=make_tools(atlas))
    out = agent.invoke({"messages": [("user", QUESTION)]})
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1 and tool_messages[0].status == "success"
    found = json.loads(tool_messages[0].content)
    assert (found["endpoints"][0]["method"], found["endpoints"][0]["path"]) == (
        "POST", "/v2/locations")  # fmt: skip
    assert found["endpoints"][0]["citation"]["pointer"] == "/paths/~1v2~1locations/post"
    assert isinstance(tool_messages[0].artifact, FoundEndpoints)
    # The same JSON as MCP's structured content: every field, the primary's role included.
    assert found == tool_messages[0].artifact.model_dump(mode="json")
    assert (found["outcome"], found["endpoints"][0]["role"]) == ("answer", "primary")
    # The model's second turn was sent the tool's output.
    second_prompt = model.seen[1]
    assert any(isinstance(m, ToolMessage) and "/v2/locations" in str(m.content)
               for m in second_prompt)  # fmt: skip
    assert out["messages"][-1].content == "Use POST /v2/locations."


def test_a_tool_error_reaches_the_model_as_text(atlas: ApiAtlas) -> None:
    call = {"name": "remember", "args": {"text": "x", "refs": ["NOT A REF ///"]}, "id": "c"}
    model = ToolCallingFake(responses=[AIMessage("", tool_calls=[call]), AIMessage("ok")], seen=[])
    out = create_agent(model, tools=make_tools(atlas)).invoke({"messages": [("user", "note")]})
    reply = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert reply.status == "error", reply.content
    assert "NOT A REF" in str(reply.content) and "Traceback" not in str(reply.content)


class ParentState(TypedDict, total=False):
    request: str
    reply: str
    first_endpoint: str
    reviewed: bool


def test_the_agent_as_a_subgraph_with_a_checkpointer_resumes_its_thread(atlas: ApiAtlas) -> None:
    agent = atlas.agent

    def ask_atlas(state: ParentState) -> dict[str, Any]:
        out = agent.invoke({"question": state["request"]})  # the parent's checkpointer flows in
        result = out["result"]
        first = result.endpoints[0]
        return {"reply": result.answer, "first_endpoint": f"{first.method} {first.path}"}

    def review(state: ParentState) -> dict[str, Any]:
        return {"reviewed": True}

    builder = StateGraph(ParentState)
    builder.add_node("ask_atlas", ask_atlas)
    builder.add_node("review", review)
    builder.add_edge(START, "ask_atlas")
    builder.add_edge("ask_atlas", "review")
    builder.add_edge("review", END)
    parent = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["review"])
    config = {"configurable": {"thread_id": "apps-1"}}

    paused = parent.invoke({"request": QUESTION}, config)
    assert paused["first_endpoint"] == "POST /v2/locations" and "[1]" in paused["reply"]
    assert parent.get_state(config).next == ("review",)

    done = parent.invoke(None, config)  # resume the same thread
    assert done["reviewed"] is True and done["first_endpoint"] == "POST /v2/locations"
    assert parent.get_state(config).next == ()
    assert len(list(parent.get_state_history(config))) >= 3


def test_the_compiled_agent_is_a_node_with_its_own_checkpointed_state(atlas: ApiAtlas) -> None:
    builder = StateGraph(AgentState)  # the parent shares the agent's state keys
    builder.add_node("atlas", atlas.agent)
    builder.add_edge(START, "atlas")
    # The parent's checkpointer and store flow into the agent (its memory included).
    parent = builder.compile(checkpointer=InMemorySaver(), store=atlas.memory_store)
    config = {"configurable": {"thread_id": "apps-2"}}
    out = parent.invoke({"question": QUESTION}, config, context=AgentContext(project="demo"))
    assert out["result"].endpoints[0].path == "/v2/locations"
    again = parent.invoke({"question": "How do I create a shipment?"}, config,
                          context=AgentContext(project="demo"))  # fmt: skip
    assert again["result"].endpoints[0].path == "/v2/shipments"
    assert again["route"] == ROUTE  # each answer's route is its own on a resumed thread
    snapshot = parent.get_state(config, subgraphs=True)
    assert snapshot.values["result"].endpoints[0].path == "/v2/shipments"


def _unregistered_reads(saver: InMemorySaver, atlas: ApiAtlas) -> list[str]:
    """The classes ``saver`` read back without knowing them, for a parent that shares the
    agent's state and one that calls it inside a node, each on a resumed thread."""
    seen: list[str] = []
    stop = register_serde_event_listener(lambda e: seen.append(f"{e['module']}.{e['name']}"))
    try:
        shared = StateGraph(AgentState)
        shared.add_node("atlas", atlas.agent)
        shared.add_edge(START, "atlas")
        inside = StateGraph(ParentState)
        inside.add_node("ask", lambda s: {"reply": atlas.agent.invoke(
            {"question": s["request"]})["result"].answer})  # fmt: skip
        inside.add_edge(START, "ask")
        for n, (builder, state) in enumerate(((shared, {"question": QUESTION}),
                                              (inside, {"request": QUESTION}))):  # fmt: skip
            parent = builder.compile(checkpointer=saver)
            config = {"configurable": {"thread_id": f"serde-{n}"}}
            parent.invoke(state, config)
            parent.invoke(state, config)  # the thread resumes from its checkpoint
            parent.get_state(config, subgraphs=True)
    finally:
        stop()
    return seen


def test_the_state_reads_back_from_a_checkpoint_without_unregistered_types(atlas: ApiAtlas
                                                                           ) -> None:
    assert "apiatlas.rag.answer.result.AnswerResult" in _unregistered_reads(InMemorySaver(),
                                                                            atlas)  # fmt: skip
    assert _unregistered_reads(InMemorySaver(serde=checkpoint_serde()), atlas) == []
    assert ("apiatlas.rag.answer.result", "AnswerResult") in SERDE_ALLOWLIST


def test_a_plain_dict_context_passed_through_a_parent_graph_is_read(atlas: ApiAtlas) -> None:
    builder = StateGraph(AgentState)
    builder.add_node("atlas", atlas.agent)
    builder.add_edge(START, "atlas")
    parent = builder.compile()
    # The parent's own keys (``tenant``) are the parent's; the agent reads its fields.
    out = parent.invoke({"question": QUESTION}, context={"project": "demo", "k": 1,
                                                          "tenant": "acme"})  # fmt: skip
    assert [e.path for e in out["result"].endpoints] == ["/v2/locations"]
    with pytest.raises(UsageError, match="no key 'projcet'; did you mean 'project'"):
        parent.invoke({"question": QUESTION}, context={"projcet": "demo"})
    with pytest.raises(ConfigError, match="'../x'"):  # the dict's project is checked as such
        parent.invoke({"question": QUESTION}, context={"project": "../x"})
    # A time from JSON is read as one, however the context was built.
    past = parent.invoke({"question": QUESTION}, context={"project": "demo",
                                                           "at": "2026-01-01T00:00:00+00:00"})
    assert past["result"].endpoints[0].path == "/v2/locations"
    assert AgentContext(at="2026-01-01T00:00:00+00:00").at == datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(UsageError, match="ISO 8601"):
        AgentContext(at="last tuesday")


def test_stream_updates_come_one_per_node_in_route_order(atlas: ApiAtlas) -> None:
    context = AgentContext(project="demo")
    updates = list(atlas.agent.stream({"question": QUESTION}, stream_mode="updates",
                                      context=context))  # fmt: skip
    nodes = [next(iter(u)) for u in updates]
    assert nodes == ROUTE
    assert updates[-1]["compose"]["result"].endpoints[0].path == "/v2/locations"


async def test_astream_events_reports_every_node(atlas: ApiAtlas) -> None:
    started, ended = [], []
    async for event in atlas.agent.astream_events(
        {"question": QUESTION}, context=AgentContext(project="demo"), version="v2"
    ):
        if event["event"] == "on_chain_start" and event["name"] in ROUTE:
            started.append(event["name"])
        if event["event"] == "on_chain_end" and event["name"] == "apiatlas":
            ended.append(event["data"]["output"])
    assert list(dict.fromkeys(started)) == ROUTE  # a node's own runnable may start inside it
    assert ended and ended[-1]["result"].endpoints[0].path == "/v2/locations"


def _passages(docs: list[Document]) -> str:
    return "\n\n".join(f"[{d.metadata.get('source')}] {d.page_content}" for d in docs)


def test_the_retriever_works_in_an_lcel_chain(atlas: ApiAtlas) -> None:
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer from these passages only:\n{context}"),
        ("human", "{question}"),
    ])  # fmt: skip
    chain = RunnableParallel(
        context=atlas.retriever | RunnableLambda(_passages), question=RunnablePassthrough()
    ) | prompt
    value = chain.invoke("How do I verify a webhook signature?")
    system, human = value.to_messages()
    assert human.content == "How do I verify a webhook signature?"
    assert "webhooks.md" in system.content and "signature" in system.content.lower()
    batch = chain.batch([QUESTION, "How do I create a shipment?"])
    assert "/v2/locations" in batch[0].to_messages()[0].content
    assert "shipment" in batch[1].to_messages()[0].content.lower()


def test_the_knowledge_graph_retriever_works_in_an_lcel_chain(atlas: ApiAtlas) -> None:
    from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever

    retriever = KnowledgeGraphRetriever(store=atlas.graph, embeddings=atlas.embeddings,
                                        project="demo")  # fmt: skip
    chain = RunnableParallel(endpoints=retriever, question=RunnablePassthrough())
    out = chain.invoke(QUESTION)
    assert out["question"] == QUESTION
    assert out["endpoints"] and "/v2/locations" in out["endpoints"][0].page_content

