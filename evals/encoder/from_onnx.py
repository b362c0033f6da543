"""An exported encoder's weights, read back from its fused ONNX graph into a trainable folder.

    python -m apiatlas.evals.encoder.from_onnx OUT --onnx MODEL_ONNX --provenance PROVENANCE_JSON

``make train-encoder ROUND_ONE=<commit>`` uses it to start the second training round from the
encoder shipped at that commit instead of training round one again. ``OUT/model`` is the
trainable folder; ``OUT/train.json`` is that model's recipe, read from its provenance, so the
second round records the whole chain.

The export fuses each layer's query, key and value projections into one ``Attention`` weight
(``[384, 3 * 384]``, the three transposed matrices side by side) and stores the other linear
layers as transposed ``MatMul`` weights, three a layer in graph order (attention output,
intermediate, output). This reverses that onto the base model's architecture, so a second
training round can start from the shipped weights (float16-stored, read as float32), and checks
that the folder embeds as the ONNX file does.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from apiatlas.errors import UsageError
from apiatlas.files import sha256_of

MIN_COSINE = 0.99999
"""Lowest cosine, on a few texts, between the read-back folder and the ONNX file (measured
0.9999999 on the shipped encoder: float16 storage is the only difference)."""


def onnx_weights(path: Path) -> dict[str, np.ndarray]:
    """Every initializer of ``path`` as float32, keyed by its name without ``__half``."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    return {i.name.removesuffix("__half"): numpy_helper.to_array(i).astype(np.float32)
            for i in model.graph.initializer}


def state_dict(weights: dict[str, np.ndarray], layers: int) -> dict[str, np.ndarray]:
    """The BertModel state dict (without the pooler) that ``weights`` were exported from."""
    state = {k.removeprefix("encoder."): v for k, v in weights.items()
             if k.startswith("encoder.")}
    matmuls = sorted((k for k in weights if k.startswith("onnx::MatMul_")),
                     key=lambda k: int(k.rsplit("_", 1)[1]))
    if len(matmuls) != 3 * layers:
        raise ValueError(f"expected {3 * layers} MatMul weights, found {len(matmuls)}")
    for layer in range(layers):
        prefix = f"encoder.layer.{layer}"
        out_attn, inter, out = matmuls[3 * layer:3 * layer + 3]
        state[f"{prefix}.attention.output.dense.weight"] = weights[out_attn].T
        state[f"{prefix}.intermediate.dense.weight"] = weights[inter].T
        state[f"{prefix}.output.dense.weight"] = weights[out].T
        qkv, bias = weights[f"Attention_{layer}_qkv_weight"], weights[f"Attention_{layer}_qkv_bias"]
        for i, name in enumerate(("query", "key", "value")):
            width = qkv.shape[1] // 3
            state[f"{prefix}.attention.self.{name}.weight"] = qkv[:, i * width:(i + 1) * width].T
            state[f"{prefix}.attention.self.{name}.bias"] = bias[i * width:(i + 1) * width]
    return state


def convert(onnx_path: Path, out: Path) -> float:
    """Write the trainable folder to ``out``; the lowest cosine between its embeddings and the
    ONNX file's on a few texts. The tokenizer is the packaged encoder's (every export carries
    the base model's)."""
    import torch
    from transformers import AutoModel

    from apiatlas.evals.encoder.train import save_model
    from apiatlas.rag.runtime.onnx_minilm import base_model_dir, model_dir

    base = base_model_dir()
    model = AutoModel.from_pretrained(str(base), local_files_only=True, dtype=torch.float32)
    hint = "export a model with apiatlas.evals.encoder.export, or read another file"
    try:
        state = state_dict(onnx_weights(onnx_path), model.config.num_hidden_layers)
    except (KeyError, ValueError) as e:
        raise UsageError(f"{onnx_path}: not an all-MiniLM-L6-v2 export ({e}); {hint}") from e
    missing, unexpected = model.load_state_dict(
        {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}, strict=False)
    if unexpected or any(not k.startswith("pooler.") for k in missing):
        raise UsageError(f"{onnx_path}: weights do not fit: missing {missing}, unexpected "
                         f"{unexpected}; {hint}")
    save_model(model, base, out)
    shutil.copy2(model_dir() / "tokenizer.json", out / "tokenizer.json")
    return _check(onnx_path, out)


def _check(onnx_path: Path, folder: Path) -> float:
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModel

    from apiatlas.evals.encoder.quick import onnx_embed
    from apiatlas.evals.encoder.train import encode

    texts = ["How do I delete a stack set?", "POST /v2/locations Creates a location.",
             "list the invoices of a customer between two dates " * 20]
    model = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    with torch.no_grad():
        ours = np.stack([encode(model, tokenizer, "cpu", [t], 256, False)[0].numpy()
                         for t in texts])
    theirs = onnx_embed(onnx_path)(texts)
    return float(np.min(np.sum(ours * theirs, axis=1)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--onnx", type=Path, required=True, help="an exported model.onnx")
    parser.add_argument("--provenance", type=Path, required=True,
                        help="that model's provenance.json (its recipe becomes OUT/train.json)")
    args = parser.parse_args(argv)
    cosine = convert(args.onnx, args.out / "model")
    if cosine < MIN_COSINE:
        raise UsageError(f"{args.onnx}: read back with cosine {cosine:.7f} < {MIN_COSINE}; "
                         "is it an export of all-MiniLM-L6-v2 by apiatlas.evals.encoder.export?")
    recipe = json.loads(args.provenance.read_text(encoding="utf-8"))["recipe"]
    record = {**recipe, "read_back_from": sha256_of(args.onnx), "read_back_cosine": cosine}
    (args.out / "train.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"lowest cosine to the ONNX file: {cosine:.7f}")


if __name__ == "__main__":
    main()
