"""``make train-encoder``: fine-tune all-MiniLM-L6-v2 (all layers) on the corpus pairs.

    python -m apiatlas.evals.encoder.train [--pairs FILE ...] [--written FILE ...]
        [--written-repeat N] [--out DIR] [--seed S] [--epochs E] [--batch B] [--lr LR]
        [--max-steps N] [--device cpu|cuda]

The loss is MultipleNegativesRankingLoss with hard negatives, written out here: each query of a
batch is scored (cosine times :data:`SCALE`) against every positive and every hard negative of
the batch, and cross-entropy asks for its own positive. A batch is four groups of
:data:`GROUP` pairs, each group from one spec, so most in-batch negatives are endpoints of the
same API, as a question's competitors are at run time; an endpoint appears at most once in a
batch (two of its pairs would be each other's false negatives).

Writes ``DIR/model`` (a sentence-transformers folder: weights, tokenizer, pooling config) and
``DIR/train.json`` (the recipe, the pairs' sha256, the losses). Runs on the CPU, or on a GPU
when one is there (``--device cuda``); nothing depends on one. The forward passes run under
bfloat16 autocast where the device computes in it natively (a GPU, or a CPU with AVX512-BF16 or
AMX: 1.4x faster a step than float32 on this project's 2-core machine); the weights and the
optimizer stay float32.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCALE = 20.0
"""sentence-transformers' MultipleNegativesRankingLoss scale (cosine similarities times 20)."""
GROUP = 16
QUERY_TOKENS = 64
DOC_TOKENS = 256
"""The product embeds the first 256 tokens of a card (``CARD_TOKENS``)."""
_COPIED = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
           "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json")


def read_pairs(files: list[Path]) -> list[dict[str, Any]]:
    """Every pair of ``files`` (JSON lines, gzip or plain), in file order."""
    pairs = []
    for file in files:
        opener = gzip.open if file.suffix == ".gz" else open
        with opener(file, "rt", encoding="utf-8") as f:
            pairs += [json.loads(line) for line in f if line.strip()]
    return pairs


def make_batches(pairs: list[dict[str, Any]], size: int, rng: random.Random) -> list[list[int]]:
    """Indices of ``pairs`` in batches of ``size``: groups of :data:`GROUP` pairs of one spec,
    shuffled and joined, each endpoint at most once per batch (a repeat waits for a later batch).
    """
    by_spec: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        by_spec.setdefault(pair["spec"], []).append(i)
    groups = []
    for spec in sorted(by_spec):
        members = by_spec[spec]
        rng.shuffle(members)
        groups += [members[k:k + GROUP] for k in range(0, len(members), GROUP)]
    rng.shuffle(groups)
    batches: list[list[int]] = []
    current: list[int] = []
    seen: set[tuple[str, str]] = set()
    waiting: list[int] = []
    for index in (i for g in groups for i in g):
        candidates = [index]
        if not current:  # a new batch takes the pairs that waited first
            candidates, waiting = [*waiting, index], []
        for i in candidates:
            key = (pairs[i]["spec"], pairs[i]["endpoint"])
            if key in seen:
                waiting.append(i)
                continue
            current.append(i)
            seen.add(key)
            if len(current) == size:
                batches.append(current)
                current, seen = [], set()
    if len(current) > 1:
        batches.append(current)
    return batches


def sha256_files(files: list[Path]) -> str:
    """sha256 of the pairs files (``apiatlas.files.sha256_of``'s digest: this module imports
    nothing of the project, so that a GPU machine without its dependencies can run it)."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
    return digest.hexdigest()


def train(base: Path, files: list[Path], out: Path, *, seed: int, epochs: float, batch: int,
          lr: float, max_steps: int, device: str, written: tuple[Path, ...] = (),
          written_repeat: int = 1) -> dict[str, Any]:
    """Fine-tune the model in ``base`` on the pairs of ``files`` and ``written_repeat`` times
    those of ``written``; the model goes to ``out/model``. Returns the run's record (also
    written to ``out/train.json``); when ``base`` is an earlier round's ``model`` folder, that
    round's ``train.json`` is kept in it as ``base_recipe``."""
    import numpy as np
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    rng = random.Random(seed)
    pairs = read_pairs(files) + read_pairs(list(written)) * written_repeat
    # float32 whatever the checkpoint stores (a float16 copy would train to NaN under AdamW)
    model = AutoModel.from_pretrained(str(base), local_files_only=True,
                                      dtype=torch.float32).to(device).train()
    tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    plan = _plan(pairs, epochs=epochs, batch=batch, max_steps=max_steps, rng=rng)
    steps = len(plan)
    half = native_bf16(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, _rate(steps))
    losses: list[float] = []
    started = time.monotonic()
    for step, indices in enumerate(plan):
        loss = _loss(model, tokenizer, device, [pairs[i] for i in indices], half)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(float(loss.detach()))
        if step % 10 == 0 or step == steps - 1:
            mean = sum(losses[-10:]) / len(losses[-10:])
            print(f"step {step + 1}/{steps} loss {mean:.4f} "
                  f"{time.monotonic() - started:.0f}s", flush=True)
    save_model(model, base, out / "model")
    record = {
        "base": base.name, "pairs_files": [f.name for f in files],
        "written_files": [f.name for f in written], "written_repeat": written_repeat,
        "pairs_sha256": sha256_files([*files, *written]), "pairs": len(pairs), "seed": seed,
        "epochs": epochs, "batch": batch, "group": GROUP, "lr": lr, "steps": steps,
        "scale": SCALE, "query_tokens": QUERY_TOKENS, "doc_tokens": DOC_TOKENS,
        "device": device, "autocast": "bfloat16" if half else "off", "torch": torch.__version__,
        "seconds": round(time.monotonic() - started),
        "loss_first_50": sum(losses[:50]) / max(1, len(losses[:50])),
        "loss_last_50": sum(losses[-50:]) / max(1, len(losses[-50:])),
    }
    earlier = base.parent / "train.json"  # a base trained here: its own record, so rounds chain
    if earlier.exists():
        record["base_recipe"] = json.loads(earlier.read_text(encoding="utf-8"))
    (out / "train.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def _loss(model: Any, tokenizer: Any, device: str, chosen: list[dict[str, Any]],
          half: bool) -> Any:
    """MultipleNegativesRankingLoss of one batch: each query against every positive and hard
    negative of the batch, its own positive the target."""
    import torch

    queries = encode(model, tokenizer, device, [p["query"] for p in chosen], QUERY_TOKENS, half)
    docs = [p["positive"] for p in chosen]
    docs += [p["negative"] for p in chosen if p.get("negative")]
    targets = encode(model, tokenizer, device, docs, DOC_TOKENS, half)
    scores = queries @ targets.T * SCALE
    return torch.nn.functional.cross_entropy(scores, torch.arange(len(chosen), device=device))


def _plan(pairs: list[dict[str, Any]], *, epochs: float, batch: int, max_steps: int,
          rng: random.Random) -> list[list[int]]:
    """The batches of the run, in order: whole epochs of :func:`make_batches`, cut to the
    fraction of the last epoch and to ``max_steps`` (0: no cap)."""
    plan: list[list[int]] = []
    whole = math.ceil(epochs)
    for _ in range(whole):
        plan += make_batches(pairs, batch, rng)
    steps = len(plan) if epochs == whole else int(len(plan) * epochs / whole)
    if max_steps:
        steps = min(steps, max_steps)
    return plan[:steps]


def _rate(steps: int) -> Callable[[int], float]:
    """Linear warm-up over the first tenth of the steps, then linear decay to zero."""
    warmup = max(1, steps // 10)

    def rate(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return rate


def native_bf16(device: str) -> bool:
    """Whether to run the forward passes under bfloat16 autocast on ``device``: on a GPU (as the
    shipped run did), and on a CPU whose flags (``/proc/cpuinfo``) name AVX512-BF16 or AMX-BF16
    (elsewhere bfloat16 is emulated, slower than float32)."""
    if device != "cpu":
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def encode(model: Any, tokenizer: Any, device: str, texts: list[str], limit: int,
            half: bool) -> Any:
    """Unit mean-pooled vectors of ``texts``, each cut to ``limit`` tokens (its last token
    kept), with gradients; the forward pass under bfloat16 autocast when ``half``."""
    import torch

    encoded = tokenizer.encode_batch(texts)
    width = min(limit, max(len(e.ids) for e in encoded))
    ids = torch.zeros((len(texts), width), dtype=torch.long)
    mask = torch.zeros((len(texts), width), dtype=torch.long)
    for row, e in enumerate(encoded):
        cut = e.ids[:width - 1] + [e.ids[-1]] if len(e.ids) > width else e.ids
        ids[row, :len(cut)] = torch.tensor(cut)
        mask[row, :len(cut)] = 1
    ids, mask = ids.to(device), mask.to(device)
    with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=half):
        tokens = model(input_ids=ids, attention_mask=mask,
                       token_type_ids=torch.zeros_like(ids)).last_hidden_state
    weights = mask.unsqueeze(-1).to(tokens.dtype)
    pooled = (tokens * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled.float(), p=2, dim=1)


def save_model(model: Any, base: Path, folder: Path) -> None:
    """The trained model to ``folder``, with the base model's tokenizer and pooling files."""
    folder.mkdir(parents=True, exist_ok=True)
    model.eval().to("cpu").save_pretrained(str(folder), safe_serialization=True)
    for name in _COPIED:
        if (base / name).exists():
            shutil.copy2(base / name, folder / name)
    if (base / "1_Pooling").is_dir():
        shutil.copytree(base / "1_Pooling", folder / "1_Pooling", dirs_exist_ok=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, default=None,
                        help="the model to start from (the packaged all-MiniLM-L6-v2)")
    parser.add_argument("--pairs", type=Path, nargs="*",
                        default=[Path(".apiatlas/corpus/pairs.jsonl.gz")])
    parser.add_argument("--written", type=Path, nargs="*",
                        default=[Path(".apiatlas/corpus/written.jsonl.gz")])
    parser.add_argument("--written-repeat", type=int, default=3,
                        help="times each written question is seen per pass (the weak pairs once)")
    parser.add_argument("--out", type=Path, default=Path(".apiatlas/encoder"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--max-steps", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args(argv)
    base = args.base
    if base is None:
        from apiatlas.rag.runtime.onnx_minilm import base_model_dir
        base = base_model_dir()
    record = train(base, args.pairs, args.out, seed=args.seed, epochs=args.epochs,
                   batch=args.batch, lr=args.lr, max_steps=args.max_steps, device=args.device,
                   written=tuple(args.written), written_repeat=args.written_repeat)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
