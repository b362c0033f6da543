"""Token-aware splitting with the embedding model's own tokenizer.

A chunk longer than the model's window is silently truncated at embedding time, so whatever is
past the window would never be found. Chunks are therefore measured with the same tokenizer the
embedder uses, special tokens included, and anything still over the limit is split again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.documents import Document
from langchain_text_splitters import RecursiveCharacterTextSplitter

from apiatlas.errors import ConfigError
from apiatlas.loaders.models import DocPage

if TYPE_CHECKING:
    from tokenizers import Tokenizer

_MIN_BODY_TOKENS = 16


class TokenSplitter:
    """Splits text into chunks of at most ``max_tokens`` model tokens.

    Args:
        tokenizer: A ``tokenizers.Tokenizer`` without truncation (the embedding model's own,
            :func:`~apiatlas.rag.runtime.embeddings.local_tokenizer`).
        max_tokens: Largest chunk, counting the special tokens the model adds ([CLS], [SEP]).
        overlap: Tokens shared by neighbouring chunks.

    Raises:
        ConfigError: If the limits leave no room for text.
    """

    def __init__(
        self, tokenizer: Tokenizer, *, max_tokens: int = 256, overlap: int = 32
    ) -> None:
        self._tokenizer = tokenizer
        self._specials = tokenizer.num_special_tokens_to_add(False)
        if max_tokens - self._specials < _MIN_BODY_TOKENS:
            raise ConfigError(
                f"max_tokens={max_tokens} leaves no room for text: use at least "
                f"{self._specials + _MIN_BODY_TOKENS}"
            )
        if not 0 <= overlap < (max_tokens - self._specials) // 2:
            raise ConfigError(
                f"overlap={overlap} must be between 0 and half of max_tokens={max_tokens}"
            )
        self.max_tokens = max_tokens
        self.overlap = overlap
        self._splitters: dict[int, RecursiveCharacterTextSplitter] = {}

    def count(self, text: str) -> int:
        """Number of tokens the model sees for ``text``, special tokens included."""
        return len(self._tokenizer.encode(text, add_special_tokens=True).ids)

    def _body_length(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def split_text(self, text: str) -> list[str]:
        """Split ``text`` into non-empty chunks of at most ``max_tokens`` tokens each."""
        return self._split(text, self.max_tokens)

    def split_documents(self, docs: list[Document]) -> list[Document]:
        """Split documents, keeping metadata and adding ``chunk`` and ``chunks``.

        A document split into several chunks gets ids ``f"{id}#{i}"``; one that fits keeps its
        id. Documents with no text are dropped.
        """
        out: list[Document] = []
        for doc in docs:
            chunks = self.split_text(doc.page_content)
            for i, chunk in enumerate(chunks):
                doc_id = doc.id
                if doc_id is not None and len(chunks) > 1:
                    doc_id = f"{doc_id}#{i}"
                metadata = {**doc.metadata, "chunk": i, "chunks": len(chunks)}
                out.append(Document(page_content=chunk, metadata=metadata, id=doc_id))
        return out

    def compact_documents(self, docs: list[Document], *, max_tokens: int) -> list[Document]:
        """One document per input, its text cut to its first ``max_tokens`` tokens.

        What is cut off is kept in the ``detail`` metadata, for keyword search and display: the
        embedding sees the head only (the words that name what the document is about), so a
        long document costs one short vector, not several full windows.
        """
        out: list[Document] = []
        for doc in docs:
            head, rest = self.head(doc.page_content, max_tokens)
            if not head:
                continue
            metadata = {**doc.metadata, "chunk": 0, "chunks": 1}
            if rest:
                metadata["detail"] = rest
            out.append(Document(page_content=head, metadata=metadata, id=doc.id))
        return out

    def head(self, text: str, max_tokens: int) -> tuple[str, str]:
        """``text`` split into its longest start of at most ``max_tokens`` tokens (special
        tokens included), ending at a line break or a space when one is near, and the rest."""
        text = text.strip()
        if self.count(text) <= max_tokens:
            return text, ""
        encoding = self._tokenizer.encode(text, add_special_tokens=False)
        body = max_tokens - self._specials
        if body < 1:
            raise ConfigError(f"max_tokens={max_tokens} leaves no room for text")
        end = encoding.offsets[body - 1][1]
        # The token after the cut starts where the head may end at the latest.
        cut = text.rfind("\n", 0, end + 1)
        if cut < end * 3 // 4:
            cut = text.rfind(" ", 0, end + 1)
        if cut < end * 3 // 4:
            cut = end
        return text[:cut].rstrip(), text[cut:].strip()

    def split_with_header(self, header: str, text: str) -> list[str]:
        """Split ``text`` so that ``header + "\\n" + chunk`` fits in ``max_tokens``.

        A header too long to leave room for text is cut to half the window first.
        """
        header = header.strip()
        if self.count(header) > self.max_tokens // 2:
            header = self._split(header, self.max_tokens // 2)[0]
        budget = self.max_tokens - (self.count(header + "\n") - self._specials)
        while budget > self._specials:
            chunks = [f"{header}\n{chunk}" for chunk in self._split(text, budget)]
            if all(self.count(chunk) <= self.max_tokens for chunk in chunks):
                return chunks
            # Joining can merge tokens across the seam; give the body a little less room.
            budget -= 4
        raise ConfigError(f"max_tokens={self.max_tokens} leaves no room for text after the header")

    def _split(self, text: str, limit: int) -> list[str]:
        out: list[str] = []
        for chunk in self._splitter(limit).split_text(text):
            chunk = chunk.strip()
            if not chunk:
                continue
            if self.count(chunk) <= limit:
                out.append(chunk)
            else:
                out.extend(self._hard_cut(chunk, limit))
        return out

    def _splitter(self, limit: int) -> RecursiveCharacterTextSplitter:
        if limit not in self._splitters:
            size = limit - self._specials
            self._splitters[limit] = RecursiveCharacterTextSplitter(
                length_function=self._body_length,
                chunk_size=size,
                chunk_overlap=min(self.overlap, size // 4),
                separators=["\n\n", "\n", ". ", " ", ",", ""],
            )
        return self._splitters[limit]

    def _hard_cut(self, text: str, limit: int) -> list[str]:
        """Cut at the longest prefix that fits, over and over; for text the splitter missed."""
        out: list[str] = []
        rest = text
        while rest:
            if self.count(rest) <= limit:
                out.append(rest)
                break
            lo, hi = 1, len(rest)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.count(rest[:mid]) <= limit:
                    lo = mid
                else:
                    hi = mid - 1
            # Prefer ending at a space in the last fifth of the cut, so words stay whole.
            space = rest.rfind(" ", lo * 4 // 5, lo)
            cut = space if space > 0 else lo
            piece = rest[:cut].strip()
            if piece:
                out.append(piece)
            rest = rest[cut:].lstrip()
        return out


def section_documents(
    pages: list[DocPage], *, project: str, splitter: TokenSplitter
) -> list[Document]:
    """Turn doc sections into embeddable, citable chunks.

    Each chunk starts with its section trail (``Title > Heading``) on the first line, so the
    embedding knows where the text comes from. Metadata holds only Chroma-safe scalars.

    Args:
        pages: Pages from :func:`~apiatlas.loaders.docs.load_docs`.
        project: Project the chunks belong to.
        splitter: The splitter matching the embedding model.

    Returns:
        Documents with ids ``f"{project}:doc:{source}#{anchor}#{chunk}"``.
    """
    docs: list[Document] = []
    for page in pages:
        for section in page.sections:
            trail = " > ".join(section.section_path) or section.title
            chunks = splitter.split_with_header(trail, section.text)
            for i, content in enumerate(chunks):
                metadata: dict[str, str | int] = {
                    "project": project,
                    "kind": "doc",
                    "source": section.source,
                    "title": section.title,
                    "section": trail,
                    "anchor": section.anchor,
                    "chunk": i,
                    "chunks": len(chunks),
                }
                doc_id = f"{project}:doc:{section.source}#{section.anchor}#{i}"
                docs.append(Document(page_content=content, metadata=metadata, id=doc_id))
    return docs
