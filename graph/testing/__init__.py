"""The knowledge-graph store conformance suite: the same tests, run against every backend.

Like ``langchain-tests``' standard suites, a backend adopts it in a few lines: a ``Test*`` class
inherits the test classes of the contracts the store implements and defines the one ``store``
fixture they take, yielding an empty store (the suite defines none: without it pytest reports
``fixture 'store' not found``)::

    import pytest
    from apiatlas.graph.testing import GraphStoreTests

    class TestMyGraphStore(GraphStoreTests):
        @pytest.fixture
        def store(self, tmp_path):
            store = MyGraphStore(tmp_path / "graph")
            yield store
            store.close()

:class:`GraphStoreTests` is the whole suite, for a :class:`~apiatlas.graph.store.LinkedGraphStore`.
A store without memory links inherits :class:`KnowledgeGraphStoreTests` and
:class:`AsyncKnowledgeGraphStoreTests` only. The tests write to the projects of
:data:`PROJECTS`; a store on a shared server empties them before and after. The SQLite, Neo4j
and in-memory reference stores adopt it in ``tests/``.

The test classes are named without a ``Test`` prefix, so pytest collects them only through an
adopter. The suite needs ``pytest`` and ``pytest-asyncio`` (the ``dev`` extra).
"""

from apiatlas.extras import require

require("pytest", "dev", purpose="the graph store conformance suite")
require("pytest_asyncio", "dev", purpose="the graph store conformance suite")

import pytest  # noqa: E402

# The suite's modules are not test modules: ask pytest to rewrite their asserts all the same, so
# that a failing backend sees both sides of a failed comparison.
for _module in ("async_tests", "graph_tests", "memory_link_tests"):
    pytest.register_assert_rewrite(f"apiatlas.graph.testing.{_module}")

from apiatlas.graph.testing.async_tests import AsyncKnowledgeGraphStoreTests  # noqa: E402
from apiatlas.graph.testing.base import PROJECTS  # noqa: E402
from apiatlas.graph.testing.graph_tests import KnowledgeGraphStoreTests  # noqa: E402
from apiatlas.graph.testing.memory_link_tests import MemoryLinksTests  # noqa: E402


class GraphStoreTests(KnowledgeGraphStoreTests, AsyncKnowledgeGraphStoreTests, MemoryLinksTests):
    """Every conformance test, for a store implementing both contracts."""


__all__ = [
    "PROJECTS",
    "AsyncKnowledgeGraphStoreTests",
    "GraphStoreTests",
    "KnowledgeGraphStoreTests",
    "MemoryLinksTests",
]
