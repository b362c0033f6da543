"""``python -m apiatlas.evals.scope``: how widely each API's id parameters are needed, on dev.

Prints, for every spec of the dev datasets (``evals/datasets/dev`` only, never a test dataset),
the share of its endpoints that need each of its most needed id parameters (as REQUIRES edges
count them: a parameter and the resource it names), then the parameters at or above
:data:`~apiatlas.graph.build.dependencies.SCOPE_SHARE`, which get no "call this first" trail,
and the nearest share on either side. Exit status 1 when a dev share lies within
:data:`MARGIN` of the threshold: then the threshold splits the data by luck, not by a gap.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV
from apiatlas.graph.build.dependencies import SCOPE_SHARE, need_shares, needed_resources
from apiatlas.graph.build.resources import derive_resources
from apiatlas.loaders.openapi import load_openapi

SHOWN = 3
"""Parameters shown per spec."""
MARGIN = 0.05


def parameter_shares(location: str) -> dict[str, list[tuple[str, float]]]:
    """Per spec at ``location``: ``(parameter (resource), share of its endpoints needing it)``,
    most needed first."""
    out: dict[str, list[tuple[str, float]]] = {}
    for spec in load_openapi(location):
        index = derive_resources(spec)
        needs = [needed_resources(ep, index) for ep in spec.endpoints]
        shares = need_shares(needs, len(spec.endpoints))
        out[spec.name] = [(f"{param} ({resource})", share)
                          for (param, resource), share in shares.items()]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    # Every dev spec, the validation sets' too (training leaves those out); never a test set.
    datasets = [load_dataset(f) for f in dataset_files(DEV)]
    shares: list[tuple[str, str, float]] = []
    seen: set[str] = set()
    for dataset in datasets:
        for location in dataset.sources.openapi:
            if location in seen:
                continue
            seen.add(location)
            for spec, params in parameter_shares(location).items():
                top = ", ".join(f"{p} {s:.2f}" for p, s in params[:SHOWN])
                print(f"{dataset.name:13} {spec:27} {top}")
                shares += [(spec, p, s) for p, s in params]
    above = [x for x in shares if x[2] >= SCOPE_SHARE]
    below = max((x[2] for x in shares if x[2] < SCOPE_SHARE), default=0.0)
    print(f"SCOPE_SHARE = {SCOPE_SHARE}; scopes: "
          + (", ".join(f"{spec} {param} {share:.2f}" for spec, param, share in above) or "none"))
    nearest_above = min((share for _, _, share in above), default=1.0)
    print(f"nearest shares: {below:.2f} below, {nearest_above:.2f} above")
    clear = SCOPE_SHARE - below >= MARGIN and nearest_above - SCOPE_SHARE >= MARGIN
    return 0 if clear else 1


if __name__ == "__main__":
    sys.exit(main())
