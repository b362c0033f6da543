"""The agent: a LangGraph state machine that routes memory -> knowledge graph -> vectors and composes cited answers."""
