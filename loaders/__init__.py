"""Loaders: OpenAPI specs and documentation into typed models and LangChain Documents."""
