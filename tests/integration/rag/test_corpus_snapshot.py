"""The corpus snapshot under ``home/derived``: the hybrid retriever's documents, vectors and BM25
index, written at ingest and read by every later process instead of the vector store."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.retrieval.dense import load_corpus, scope_filter
from apiatlas.rag.retrieval.fusion import HybridRetriever
from apiatlas.rag.retrieval.lexical import BM25Retriever
from apiatlas.rag.retrieval.snapshot import CorpusSnapshot
from tests.integration.conftest import SampleHome

QUESTIONS = ("add a new facility", "remove a webhook subscription", "list inventory counts",
             "CreateLocation", "how do refunds work")


@pytest.fixture
def home(sample_home: SampleHome, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample_home.home, tmp_path / "home"))


def test_the_ingest_wrote_the_snapshot_and_it_equals_the_store(
    home: Path, sample_home: SampleHome
) -> None:
    files = list((home / "derived").glob("corpus-*.npz"))
    assert len(files) == 1
    snapshot = CorpusSnapshot.load(files[0])
    with ApiAtlas(Settings(home=home, project=sample_home.project)) as atlas:
        store = atlas.vector_store
        stored = load_corpus(store, project=sample_home.project)
        assert [(d.id, d.page_content, d.metadata) for d in snapshot.docs] == [
            (d.id, d.page_content, d.metadata) for d in stored]
        where = scope_filter(store, sample_home.project)
        for question in QUESTIONS:
            # Exact search over the snapshot finds what Chroma finds, with the same scores.
            chroma = store.similarity_search_with_score(question, k=8, filter=where)
            exact = snapshot.nearest(atlas.embeddings.embed_query(question), 8)
            assert [d.id for d, _ in exact] == [d.id for d, _ in chroma]
            for (_, similarity), (_, distance) in zip(exact, chroma, strict=True):
                assert similarity == pytest.approx(1.0 - distance, abs=1e-5)
            # BM25 over the stored index ranks as BM25 over the store's documents does.
            fresh = BM25Retriever.from_documents(stored).rank(question, 10)
            kept = BM25Retriever(docs=snapshot.docs, index=snapshot.lexical).rank(question, 10)
            assert [(d.id, d.metadata["score"], d.metadata["coverage"]) for d in kept] == [
                (d.id, d.metadata["score"], d.metadata["coverage"]) for d in fresh]


def test_a_question_in_a_new_process_never_opens_the_vector_store(
    home: Path, sample_home: SampleHome
) -> None:
    question = "What endpoints can I use to create a location?"
    code = (
        "import json, sys\n"
        "from apiatlas.cli import main\n"
        f"main(['ask', '--home', {str(home)!r}, '--project', {sample_home.project!r}, "
        f"'--json', {question!r}])\n"
        "heavy = ('chromadb', 'langchain_chroma', 'torch', 'apiatlas.loaders.openapi')\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
    answer = json.loads(done.stdout)
    with ApiAtlas(Settings(home=home, project=sample_home.project)) as atlas:
        same = atlas.ask(question).model_dump(mode="json")
    assert answer["endpoints"] == same["endpoints"]
    assert answer["answer"] == same["answer"]


def test_a_changed_guide_is_in_the_next_search_of_every_process(
    home: Path, sample_home: SampleHome, tmp_path: Path
) -> None:
    sample = Path(shutil.copytree(sample_home.sample, tmp_path / "sample"))
    guide = next(iter(sorted((sample / "guides").glob("*.md"))))
    guide.write_text(guide.read_text(encoding="utf-8")
                     + "\n\n## Zanzibar quotas\n\nZanzibar quotas cap how many widgets a day.\n",
                     encoding="utf-8")
    settings = Settings(home=home, project=sample_home.project)
    with ApiAtlas(settings) as reader:
        before = reader.retriever.invoke("zanzibar quotas")
        assert not any("Zanzibar" in d.page_content for d in before)
        with ApiAtlas(settings) as writer:
            writer.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"])
        # The reader's snapshot is of an older revision: it reads the new one.
        after = reader.retriever.invoke("zanzibar quotas")
        assert "Zanzibar" in after[0].page_content
        assert after[0].metadata["dense_rank"] is not None
        assert after[0].metadata["bm25_rank"] == 1
    assert len(list((home / "derived").glob("corpus-*.npz"))) == 1  # the old one is gone


def test_a_retriever_without_a_store_needs_embeddings_in_its_cache() -> None:
    from apiatlas.errors import UsageError
    from apiatlas.rag.retrieval.snapshot import CorpusCache

    cache = CorpusCache(lambda project: ([], []), lambda project: "")
    with pytest.raises(UsageError, match="vector_store"):
        HybridRetriever(corpus=cache)
