"""Train the encoder variants on a GPU machine and keep the one validation prefers.

    python experiments/2026-11-27-encoder/device_run.py CARRY OUT [BUDGET_SECONDS]

CARRY holds ``base/`` (all-MiniLM-L6-v2, weights stored as float16), ``pairs.jsonl.xz`` (the
weak pairs of ``make corpus``), ``written.jsonl.gz`` (the written questions' pairs) and
``quick-dev.json.gz`` (``python -m apiatlas.evals.encoder.quick build``: dev cards and cases,
validation included, no test set). The machine has torch but not this project's dependencies,
so the recipe's modules are imported by path. Every variant is scored with dense retrieval on
each dev API; the best by the validation APIs' mean top1 (DocuSign, Figma, Intercom) is written
to OUT as float16 safetensors in 15 MB parts, beside ``results.json``.
"""

from __future__ import annotations

import gzip
import os
import json
import lzma
import random
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "evals" / "encoder"))
import quick  # noqa: E402
import train as recipe  # noqa: E402

VALIDATION = ("docusign", "figma", "intercom")
CARRY, OUT = Path(sys.argv[1]), Path(sys.argv[2])
BUDGET = float(sys.argv[3]) if len(sys.argv) > 3 else 420.0
START = time.monotonic()
MAX_STEPS = int(os.environ.get("ENC_MAX_STEPS", "0"))
"""Only for a smoke run of this script on a CPU: stop each variant after this many steps."""


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


DEVICE = _device()


def torch_embed(folder: Path):
    import numpy as np
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(folder), dtype=torch.float32).to(DEVICE).eval()
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.enable_truncation(256)
    tok.no_padding()

    def embed(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for k in range(0, len(order), 256):
            rows = order[k:k + 256]
            enc = tok.encode_batch([texts[i] for i in rows])
            width = max(len(e.ids) for e in enc)
            ids = torch.zeros((len(rows), width), dtype=torch.long)
            mask = torch.zeros_like(ids)
            for r, e in enumerate(enc):
                ids[r, :len(e.ids)] = torch.tensor(e.ids)
                mask[r, :len(e.ids)] = 1
            ids, mask = ids.to(DEVICE), mask.to(DEVICE)
            with torch.no_grad():
                h = model(input_ids=ids, attention_mask=mask,
                          token_type_ids=torch.zeros_like(ids)).last_hidden_state
            w = mask.unsqueeze(-1).float()
            v = torch.nn.functional.normalize((h * w).sum(1) / w.sum(1), dim=1)
            out[rows] = v.cpu().numpy()
        return out

    return embed


def unpack_pairs(work: Path) -> tuple[Path, Path]:
    weak = work / "weak.jsonl"
    with lzma.open(CARRY / "pairs.jsonl.xz", "rb") as src, weak.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    written = work / "written.jsonl"
    with gzip.open(CARRY / "written.jsonl.gz", "rb") as src, written.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return weak, written


def save_parts(folder: Path, name: str) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    tensors = {k: v.to(torch.float16) for k, v in load_file(str(folder / "model.safetensors")).items()}
    target = OUT / f"{name}.safetensors"
    save_file(tensors, str(target))
    data = target.read_bytes()
    target.unlink()
    for old in OUT.glob("weights.part*"):
        old.unlink()
    for i in range(0, len(data), 15 * 1024 * 1024):
        (OUT / f"weights.part{i // (15 * 1024 * 1024)}").write_bytes(data[i:i + 15 * 1024 * 1024])


def main() -> None:
    import torch

    work = Path("/tmp/enc")
    work.mkdir(exist_ok=True)
    weak, written = unpack_pairs(work)
    with gzip.open(CARRY / "quick-dev.json.gz", "rt", encoding="utf-8") as f:
        dev = json.load(f)
    base = CARRY / "base"
    results: dict[str, dict] = {
        "device": torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu"}
    results["packaged"] = {"scores": quick.score(torch_embed(base), dev)}
    results["packaged"]["validation"] = quick.means(results["packaged"]["scores"], VALIDATION)
    print("packaged", results["packaged"]["validation"], flush=True)
    written3 = work / "written3.jsonl"
    written3.write_text(written.read_text() * 3)
    variants = [
        ("weak+written", [weak, written3], 1),
        ("written", [written3], 1),
        ("weak", [weak], 1),
        ("weak+written-seed2", [weak, written3], 2),
    ]
    best = (-1.0, "")
    for name, files, seed in variants:
        if time.monotonic() - START > BUDGET:
            results[name] = {"skipped": "time budget"}
            continue
        out = work / name
        record = recipe.train(base, files, out, seed=seed, epochs=1.0, batch=64, lr=2e-5,
                              max_steps=MAX_STEPS, device=DEVICE)
        scores = quick.score(torch_embed(out / "model"), dev)
        val = quick.means(scores, VALIDATION)
        results[name] = {"train": record, "scores": scores, "validation": val}
        print(name, val, record["seconds"], "s", flush=True)
        if val["top1"] > best[0]:
            best = (val["top1"], name)
            save_parts(out / "model", name)
            results["chosen"] = name
        (OUT / "results.json").write_text(json.dumps(results, indent=1))
    results["elapsed"] = time.monotonic() - START
    (OUT / "results.json").write_text(json.dumps(results, indent=1))
    print("chosen", results.get("chosen"), "elapsed", round(results["elapsed"]), flush=True)


if __name__ == "__main__":
    main()
