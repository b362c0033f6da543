"""TokenSplitter with the embedding model's real tokenizer (all-MiniLM-L6-v2, offline)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from apiatlas.errors import ConfigError
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.models import DocPage, DocSection
from apiatlas.loaders.splitting import TokenSplitter, section_documents
from apiatlas.rag.runtime.embeddings import local_tokenizer


@pytest.fixture(scope="module")
def splitter() -> TokenSplitter:
    return TokenSplitter(local_tokenizer(), max_tokens=256, overlap=32)


def test_count_includes_the_special_tokens(splitter: TokenSplitter) -> None:
    assert splitter.count("") == 2
    assert splitter.count("hello world") == 4


def test_long_prose_is_split_within_the_window(splitter: TokenSplitter) -> None:
    text = "\n\n".join(
        f"Paragraph {i}: create a location with POST /v2/locations and read it back." * 3
        for i in range(60)
    )
    chunks = splitter.split_text(text)
    assert len(chunks) > 5
    assert max(splitter.count(c) for c in chunks) <= 256
    assert "Paragraph 0" in chunks[0] and "Paragraph 59" in chunks[-1]


@pytest.mark.parametrize(
    "blob",
    [
        "x" * 10_000,
        "a1b2c3" * 1_500,
        "汉字" * 1_000,
        "{" + ",".join(f'"k{i}":{i}' for i in range(1_500)) + "}",
    ],
)
def test_blobs_without_separators_are_still_cut(splitter: TokenSplitter, blob: str) -> None:
    chunks = splitter.split_text(blob)
    assert chunks
    assert max(splitter.count(c) for c in chunks) <= 256
    assert sum(len(c) for c in chunks) >= len(blob) * 0.95


def test_split_documents_numbers_chunks_and_ids(splitter: TokenSplitter) -> None:
    long_doc = Document(page_content="word " * 2_000, metadata={"source": "a.md"}, id="p:a")
    short_doc = Document(page_content="short text", metadata={"source": "b.md"}, id="p:b")
    anonymous = Document(page_content="no id here", metadata={})
    out = splitter.split_documents([long_doc, short_doc, anonymous])
    long_chunks = [d for d in out if d.metadata.get("source") == "a.md"]
    n = len(long_chunks)
    assert n > 1
    assert [d.id for d in long_chunks] == [f"p:a#{i}" for i in range(n)]
    assert [d.metadata["chunk"] for d in long_chunks] == list(range(n))
    assert {d.metadata["chunks"] for d in long_chunks} == {n}
    short = next(d for d in out if d.metadata.get("source") == "b.md")
    assert (short.id, short.metadata["chunk"], short.metadata["chunks"]) == ("p:b", 0, 1)
    assert out[-1].id is None and out[-1].page_content == "no id here"


def test_compact_documents_embed_the_head_and_keep_the_rest_as_detail(
    splitter: TokenSplitter,
) -> None:
    head = "POST /v2/locations\nOperation: CreateLocation\nSummary: Create a location"
    fields = "\n".join(f"- field_{i} (string, optional): the field number {i}" for i in range(80))
    long_card = Document(page_content=f"{head}\n\n{fields}", metadata={"source": "s"}, id="p:1")
    short_card = Document(page_content=head, metadata={"source": "s"}, id="p:2")
    empty = Document(page_content="  ", metadata={"source": "s"}, id="p:3")

    out = splitter.compact_documents([long_card, short_card, empty], max_tokens=64)

    assert [d.id for d in out] == ["p:1", "p:2"]
    compact, short = out
    assert splitter.count(compact.page_content) <= 64
    assert compact.page_content.startswith(head)
    # Nothing is lost: the head and the detail together are the whole text, cut at a line.
    assert f"{compact.page_content}\n{compact.metadata['detail']}" == long_card.page_content
    assert (compact.metadata["chunk"], compact.metadata["chunks"]) == (0, 1)
    assert short.page_content == head and "detail" not in short.metadata


def test_head_cuts_text_without_line_breaks_at_a_space(splitter: TokenSplitter) -> None:
    text = " ".join(f"word{i}" for i in range(400))
    head, rest = splitter.head(text, 32)
    assert splitter.count(head) <= 32
    assert f"{head} {rest}" == text
    assert splitter.head("short", 32) == ("short", "")
    with pytest.raises(ConfigError, match="max_tokens=2"):
        splitter.head(text, 2)


def test_bad_limits_are_config_errors() -> None:
    tokenizer = local_tokenizer()
    with pytest.raises(ConfigError, match="max_tokens"):
        TokenSplitter(tokenizer, max_tokens=8)
    with pytest.raises(ConfigError, match="overlap"):
        TokenSplitter(tokenizer, max_tokens=64, overlap=40)


def test_section_documents_carry_trail_metadata_and_ids(splitter: TokenSplitter) -> None:
    section = DocSection(
        source="/docs/guide.md",
        title="Guide",
        section_path=["Guide", "Create", "Body"],
        anchor="body",
        text="The body holds the fields. " * 200,
    )
    page = DocPage(source="/docs/guide.md", title="Guide", sections=[section])
    docs = section_documents([page], project="shop", splitter=splitter)
    assert len(docs) > 1
    for i, doc in enumerate(docs):
        assert doc.page_content.startswith("Guide > Create > Body\n")
        assert splitter.count(doc.page_content) <= 256
        assert doc.id == f"shop:doc:/docs/guide.md#body#{i}"
        assert doc.metadata == {
            "project": "shop",
            "kind": "doc",
            "source": "/docs/guide.md",
            "title": "Guide",
            "section": "Guide > Create > Body",
            "anchor": "body",
            "chunk": i,
            "chunks": len(docs),
        }


@pytest.mark.shared_data
def test_no_adobe_chunk_exceeds_the_window(shared_data: Path, splitter: TokenSplitter) -> None:
    pages = load_docs(shared_data / "adobe-commerce" / "docs" / "src" / "pages")
    docs = section_documents(pages, project="adobe", splitter=splitter)
    counts = [splitter.count(d.page_content) for d in docs]
    longest = max(counts)
    print(f"adobe docs: {len(docs)} chunks, longest {longest} tokens")
    assert longest <= 256
    assert len({d.id for d in docs}) == len(docs)
    scalar = (str, int, float, bool)
    assert all(isinstance(v, scalar) for d in docs for v in d.metadata.values())
    create = [
        d for d in docs
        if d.metadata["anchor"] == "create-the-first-source"
        and d.metadata["source"].endswith("inventory/create-sources.md")
    ]
    assert create and "POST V1/inventory/sources" in create[0].page_content
