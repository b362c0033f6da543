"""Train a cross-encoder verifier on build.py's pairs: BERT (the shipped encoder's fine-tuned
MiniLM weights, or another folder) with one logit on ``[CLS] question [SEP] card [SEP]``,
binary cross-entropy, on the CPU (bfloat16 autocast where native). The logit is a linear layer
on the mean of the last layer's token vectors (the pooling the encoder was trained with).

    .venv/bin/python experiments/2026-11-28-verifier/train.py PAIRS OUT \
        [--init .apiatlas/encoder-gpu/model] [--epochs 1] [--batch 32] [--lr 3e-5] \
        [--tokens 224] [--max-steps N] [--seed 13] [--kinds positive,written,mined,unanswerable]
        [--device cpu|cuda] [--check]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModel, AutoTokenizer

from apiatlas.evals.encoder.train import native_bf16

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "2026-11-27-abstention"))
from analyse import auc  # noqa: E402


class Verifier(torch.nn.Module):
    """BERT, mean pooling over the attended tokens, one linear logit."""

    def __init__(self, bert: torch.nn.Module) -> None:
        super().__init__()
        self.bert = bert
        self.head = torch.nn.Linear(bert.config.hidden_size, 1)

    def forward(self, input_ids, attention_mask, token_type_ids=None):  # noqa: ANN001
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.head(pooled.float()).squeeze(-1)

    @classmethod
    def load(cls, folder: Path) -> Verifier:
        model = cls(AutoModel.from_pretrained(folder))
        model.head.load_state_dict(torch.load(folder / "head.pt"))
        return model.eval()


def held_auc(model: Verifier, tokenizer: Any, rows: list[dict[str, Any]],
             a: argparse.Namespace) -> float:
    """AUC of the verifier's logits on ``rows`` (label 1 scored higher)."""
    model.eval()
    scores = []
    with torch.no_grad():
        for s in range(0, len(rows), 64):
            chunk = rows[s:s + 64]
            enc = tokenizer([r["question"] for r in chunk], [r["card"] for r in chunk],
                            truncation="only_second", max_length=a.tokens, padding=True,
                            return_tensors="pt").to(a.device)
            scores += model(**enc).float().tolist()
    model.train()
    return auc(scores, [r["label"] == 1 for r in rows])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("pairs", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--init", default=".apiatlas/encoder-gpu/model")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--head-lr", type=float, default=1e-3)
    p.add_argument("--tokens", type=int, default=224)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--kinds", default="positive,written,mined,unanswerable")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument("--check", action="store_true",
                   help="hold out every fifth API (sorted) and print its AUC after each pass")
    a = p.parse_args()
    kinds = set(a.kinds.split(","))
    with gzip.open(a.pairs, "rt", encoding="utf-8") as f:
        rows = [r for r in map(json.loads, f) if r["kind"] in kinds]
    held: list[dict] = []
    if a.check:
        fifth = set(sorted({r["api"] for r in rows})[::5])
        held = [r for r in rows if r["api"] in fifth]
        rows = [r for r in rows if r["api"] not in fifth]
    random.seed(a.seed)
    torch.manual_seed(a.seed)
    tokenizer = AutoTokenizer.from_pretrained(a.init)
    model = Verifier(AutoModel.from_pretrained(a.init)).to(a.device)
    model.train()
    steps_per_epoch = math.ceil(len(rows) / a.batch)
    total = int(steps_per_epoch * a.epochs)
    if a.max_steps:
        total = min(total, a.max_steps)
    optimizer = torch.optim.AdamW([
        {"params": model.bert.parameters(), "lr": a.lr},
        {"params": model.head.parameters(), "lr": a.head_lr}], weight_decay=0.01)
    warmup = max(1, total // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / (total - warmup))))
    half = native_bf16(a.device)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    order: list[int] = []
    started = time.time()
    losses = []
    for step in range(total):
        if not order:
            if step and held:
                print(f"pass done at step {step}: held-out AUC "
                      f"{held_auc(model, tokenizer, held, a):.3f}", flush=True)
            order = list(range(len(rows)))
            random.shuffle(order)
        batch = [rows[order.pop()] for _ in range(min(a.batch, len(order)))]
        enc = tokenizer([r["question"] for r in batch], [r["card"] for r in batch],
                        truncation="only_second", max_length=a.tokens, padding=True,
                        return_tensors="pt").to(a.device)
        labels = torch.tensor([float(r["label"]) for r in batch], device=a.device)
        with torch.autocast(a.device, dtype=torch.bfloat16, enabled=half):
            logits = model(**enc)
        loss = loss_fn(logits.float(), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        if step % 10 == 0 or step == total - 1:
            mean = sum(losses[-10:]) / len(losses[-10:])
            print(f"step {step + 1}/{total} loss {mean:.4f} {time.time() - started:.0f}s",
                  flush=True)
    if held:
        print(f"end at step {total}: held-out AUC {held_auc(model, tokenizer, held, a):.3f}",
              flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    model = model.cpu()
    model.bert.save_pretrained(a.out)
    torch.save(model.head.state_dict(), a.out / "head.pt")
    tokenizer.save_pretrained(a.out)
    (a.out / "train.json").write_text(json.dumps({
        "pairs": str(a.pairs), "rows": len(rows), "kinds": sorted(kinds), "init": a.init,
        "epochs": a.epochs, "batch": a.batch, "lr": a.lr, "head_lr": a.head_lr,
        "tokens": a.tokens,
        "steps": total, "seed": a.seed, "bf16": half, "seconds": round(time.time() - started),
        "loss_first": sum(losses[:10]) / len(losses[:10]),
        "loss_last": sum(losses[-10:]) / len(losses[-10:]),
    }, indent=1))


if __name__ == "__main__":
    main()
