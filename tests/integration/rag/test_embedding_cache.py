"""The document-vector cache: a text is embedded once per home and model, across projects and
rebuilt ranking indexes; questions are never cached in it."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.runtime.embedding_cache import SqliteByteStore, cached_embeddings
from apiatlas.rag.runtime.embeddings import load_embeddings, model_id
from apiatlas.sample import write_sample_api


class Counting(Embeddings):
    """The real model, counting the texts it is asked to embed."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.documents = 0
        self.queries = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def model() -> Embeddings:
    return load_embeddings(Settings())


def test_the_byte_store_keeps_values_across_connections(tmp_path: Path) -> None:
    store = SqliteByteStore(tmp_path / "cache" / "e.sqlite")
    store.mset([("a1", b"one"), ("a2", b"two"), ("b1", b"three")])
    store.mset([("a2", b"TWO")])
    store.mdelete(["b1", "missing"])
    store.close()
    again = SqliteByteStore(tmp_path / "cache" / "e.sqlite")
    assert again.mget(["a1", "a2", "b1", "zz"]) == [b"one", b"TWO", None, None]
    assert list(again.yield_keys()) == ["a1", "a2"]
    assert list(again.yield_keys(prefix="a2")) == ["a2"]
    many = [(f"k{i}", bytes([i % 256])) for i in range(1200)]  # more than one SQL batch
    again.mset(many)
    assert again.mget([k for k, _ in many]) == [v for _, v in many]


def test_a_text_is_embedded_once_and_its_vector_comes_back_exactly(
    tmp_path: Path, model: Embeddings
) -> None:
    counting = Counting(model)
    texts = ["POST /v2/locations creates a location", "GET /v2/orders lists orders"]
    first = cached_embeddings(counting, SqliteByteStore(tmp_path / "e.sqlite"))
    vectors = first.embed_documents(texts)
    assert counting.documents == 2
    # Another process (a new store on the same file) finds them.
    again = cached_embeddings(counting, SqliteByteStore(tmp_path / "e.sqlite"))
    assert again.embed_documents([texts[1], texts[0], "a new text"]) == [
        vectors[1], vectors[0], model.embed_documents(["a new text"])[0]]
    assert counting.documents == 3
    assert vectors == model.embed_documents(texts)
    # Questions go straight to the model, and leave nothing behind.
    again.embed_query("where is my parcel?")
    assert counting.queries == 1
    assert len(list(SqliteByteStore(tmp_path / "e.sqlite").yield_keys())) == 3
    assert model_id(again) == model_id(model)


def test_a_second_project_of_the_same_files_embeds_nothing_again(tmp_path: Path) -> None:
    sample = write_sample_api(tmp_path / "sample")
    with ApiAtlas(Settings(home=tmp_path / "home")) as atlas:
        counting = Counting(atlas.embeddings)
        atlas.__dict__["embeddings"] = counting  # the atlas's own model, counted
        first = atlas.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"],
                             project="first")
        embedded = counting.documents
        assert first.vectors.num_added > 0 and embedded > 0
        second = atlas.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"],
                              project="second")
        assert second.vectors.num_added == first.vectors.num_added
        # Every card, guide chunk and ranking text of the second project came from the cache.
        assert counting.documents == embedded
        answer = atlas.ask("What endpoints can I use to create a location?", project="second")
        assert (answer.endpoints[0].method, answer.endpoints[0].path) == ("POST", "/v2/locations")
