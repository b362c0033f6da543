"""The shipped encoder with its weights back in float32 (the float16 initializers and their Cast
nodes folded) and then dynamically quantised to int8 by ONNX Runtime; both written to OUT.

    .venv/bin/python experiments/2026-11-27-abstention/int8.py OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic


def float32(source: Path, target: Path) -> None:
    model = onnx.load(str(source))
    graph = model.graph
    halves = {i.name: i for i in graph.initializer if i.name.endswith("__half")}
    casts = [n for n in graph.node if n.op_type == "Cast" and n.input[0] in halves]
    kept = [i for i in graph.initializer if i.name not in halves]
    for cast in casts:
        array = numpy_helper.to_array(halves[cast.input[0]]).astype(np.float32)
        kept.append(numpy_helper.from_array(array, cast.output[0]))
    nodes = [n for n in graph.node if n not in casts]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.save(model, str(target))


VARIANTS = {
    "int8.onnx": {"weight_type": QuantType.QInt8},
    "int8-pc.onnx": {"weight_type": QuantType.QInt8, "per_channel": True},
    "uint8.onnx": {"weight_type": QuantType.QUInt8},
    "int8-pc-rr.onnx": {"weight_type": QuantType.QInt8, "per_channel": True, "reduce_range": True},
}
"""The four quantisations compared (README); ``int8-pc-rr`` is the one chosen on dev."""


def main(half: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    float32(half, out / "float32.onnx")
    for name, options in VARIANTS.items():
        quantize_dynamic(str(out / "float32.onnx"), str(out / name),
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT}, **options)
        print(name, (out / name).stat().st_size // 1_000_000, "MB")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
