"""Hostile and broken spec documents, written on demand for the loader and CLI tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_INFO = {"title": "Hostile", "version": "1"}
_PATHS = {
    "/things": {
        "get": {"operationId": "listThings", "summary": "List things",
                "responses": {"200": {"description": "ok"}}}
    }
}


def spec(**extra: Any) -> dict[str, Any]:
    """A valid OpenAPI 3 document with one operation, plus ``extra`` top-level keys."""
    return {"openapi": "3.0.3", "info": _INFO, "paths": _PATHS, **extra}


def deep_json(folder: Path, levels: int = 3000) -> Path:
    """A JSON spec with arrays nested ``levels`` deep in a vendor extension."""
    text = json.dumps(spec())[:-1] + ', "x-deep": ' + "[" * levels + "]" * levels + "}"
    path = folder / "deep.json"
    path.write_text(text, encoding="utf-8")
    return path


def deep_yaml(folder: Path, levels: int = 3000) -> Path:
    """The same in YAML flow style."""
    path = folder / "deep.yaml"
    path.write_text("openapi: 3.0.3\ninfo: {title: Deep, version: '1'}\npaths: {}\nx-deep: "
                    + "[" * levels + "]" * levels + "\n", encoding="utf-8")
    return path


def alias_bomb(folder: Path) -> Path:
    """The "billion laughs": nine levels of ten aliases each, 10**9 strings once expanded."""
    lines = ["openapi: 3.0.3", "info: {title: Bomb, version: '1'}", "paths: {}",
             "x-a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"x-a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path = folder / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def alias_loop(folder: Path) -> Path:
    """A YAML alias inside the node it names."""
    path = folder / "loop.yaml"
    path.write_text("openapi: 3.0.3\ninfo: {title: Loop, version: '1'}\npaths: {}\n"
                    "x-loop: &l [1, *l]\n", encoding="utf-8")
    return path


def huge_texts(folder: Path) -> Path:
    """A 5 MB description and a 200,000-value enum on an otherwise ordinary operation."""
    operation = {
        "operationId": "createThing",
        "summary": "Create a thing",
        "description": "Creates a thing. " + "word " * 1_000_000,
        "requestBody": {"content": {"application/json": {"schema": {
            "type": "object",
            "properties": {"color": {"type": "string",
                                     "enum": [f"c{i}" for i in range(200_000)]}},
        }}}},
        "responses": {"200": {"description": "ok"}},
    }
    path = folder / "huge.json"
    path.write_text(json.dumps(spec(paths={"/things": {"post": operation}})), encoding="utf-8")
    return path


def fifty_mb(folder: Path) -> Path:
    """A valid 50 MB spec: one operation and 50 MB of vendor-extension data."""
    blob = [{"k": i, "v": "x" * 40} for i in range(790_000)]
    path = folder / "big.json"
    path.write_text(json.dumps(spec(**{"x-blob": blob})), encoding="utf-8")
    return path


def many_refs(folder: Path, n: int = 50) -> Path:
    """A spec whose one request body reaches ``n`` schemas through a ``$ref`` chain."""
    schemas: dict[str, Any] = {
        f"S{i}": {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/S{i + 1}"}}}
        for i in range(n)
    }
    schemas[f"S{n}"] = {"type": "string"}
    operation = {
        "operationId": "createThing",
        "requestBody": {"content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/S0"}}}},
        "responses": {"200": {"description": "ok"}},
    }
    path = folder / "refs.json"
    path.write_text(json.dumps(spec(paths={"/things": {"post": operation}},
                                    components={"schemas": schemas})), encoding="utf-8")
    return path
