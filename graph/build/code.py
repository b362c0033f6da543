"""The team's code in the graph: a code set's files, and the links from its calls to endpoints.

A code set (``code:<name>``, one scanned folder) owns one ``CodeFile`` node per source file,
holding the candidate calls the loader read (:mod:`apiatlas.loaders.code`). Which calls reach an
endpoint is decided with the project's links (:func:`link_code`), recomputed after every ingest
like the guides' DESCRIBES links, so a spec ingested after the code, or changed, re-links code
that did not change. A call becomes a ``CodeSite`` in the ``links`` scope, under its file (and
its ``CodeFunction``), with a ``CALLS`` edge to the endpoint it reaches:

- ``route``: a ``METHOD /path`` string names the endpoint;
- ``http``: the call states a method and sends a path or URL that fills the endpoint's path
  template (a server's base path or host in front allowed), with that method;
- ``path``: the path fills exactly one operation's template, and the call states no method or
  one the spec does not give that path (an RPC-style API lists one method a path);
- ``operation-id``: the callee's names after its receiver are the operation id's words in any
  case form and order, singular or plural (``client.create_location``,
  ``client.chat.completions.create`` for ``createChatCompletion``, ``octokit.rest.issues.create``
  for ``issues/create``), or those after a tag the id starts with (``api.PostMessage`` for
  ``chat_postMessage``), when one operation has them; one word (``create``) names too many.

Calls that reach an API but none of its endpoints are kept as unknown calls (``endpoint`` none):
a URL on one of the API's hosts (``host``), a path whose operations the call's method does not
tell apart (``ambiguous``), or a path sent by a callee whose other calls mostly reach the API's
endpoints (``client``: the team's wrapper around it). Every site carries a confidence, the
precision its ``matched_by`` had on the dev code sets (:data:`CONFIDENCE`).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from apiatlas.graph.model import Edge, GraphBatch, Node
from apiatlas.graph.words import is_param, path_segments, singular
from apiatlas.loaders.code.calls import member_chain, words
from apiatlas.loaders.code.models import CodeCall, CodeFile

CODE_SCOPE_PREFIX = "code:"
_HOLE = re.compile(r"\{[^{}]*\}")
MatchedBy = str
CONFIDENCE: dict[str, float] = json.loads(
    resources.files("apiatlas.graph.build").joinpath("code_confidence.json").read_text()
)["confidence"]
"""Precision of each ``matched_by`` on the dev code sets (``python -m
apiatlas.evals.code --calibrate``), the confidence of a site matched that way."""


def code_scope(name: str) -> str:
    """The scope of one code set."""
    return f"{CODE_SCOPE_PREFIX}{name}"


def build_code_batch(files: Iterable[CodeFile], *, project: str, name: str,
                     root: str = "") -> GraphBatch:  # fmt: skip
    """The ``code:<name>`` batch: one ``CodeFile`` node per file, its calls in its props
    (``root``: the folder scanned, which the file's ``path`` is relative to)."""
    scope = code_scope(name)
    nodes = [
        Node(key=f"{scope}/file/{f.path}", label="CodeFile", props={
            "code_set": name, "root": root, "path": f.path, "language": f.language, "sha256": f.sha256,
            "lines": f.lines, "calls": [c.model_dump(exclude_defaults=True) for c in f.calls],
        })  # fmt: skip
        for f in files
    ]
    return GraphBatch(project=project, scope=scope, nodes=nodes)


def code_file(node: Node) -> CodeFile:
    """A stored ``CodeFile`` node read back as the loader's file (a re-scan's ``previous``)."""
    props = node.props
    return CodeFile(path=props["path"], language=props["language"], sha256=props["sha256"],
                    lines=props["lines"],
                    calls=[CodeCall.model_validate(c) for c in props.get("calls", [])])  # fmt: skip


@dataclass(frozen=True)
class _Target:
    key: str
    api: str
    method: str
    path: str
    segments: tuple[str | None, ...]  # lower-cased literals; None for a parameter


@dataclass(frozen=True)
class Match:
    """Where one call goes: an endpoint (``target`` set) or an API only (an unknown call)."""

    api: str
    matched_by: MatchedBy
    target: _Target | None = None


class _Index:
    def __init__(self, endpoints: Iterable[Node], apis: Iterable[Node]) -> None:
        self.by_length: dict[int, list[_Target]] = defaultdict(list)
        self.by_name: dict[frozenset[str], list[_Target]] = defaultdict(list)
        self.prefixes: dict[str, set[tuple[str, ...]]] = defaultdict(lambda: {()})
        self.hosts: dict[str, str] = {}
        for api in apis:
            name = api.props.get("name", "")
            for url in [*api.props.get("servers", []), api.props.get("base_path", "")]:
                parts = urlsplit(url if "//" in url else f"//x{url}" if url else "")
                if parts.hostname and "//" in url:
                    self.hosts[parts.hostname.lower()] = name
                self.prefixes[name].add(tuple(s.lower() for s in path_segments(parts.path)))
        for node in endpoints:
            p = node.props
            if p.get("webhook"):
                continue
            segments = tuple(None if is_param(s) else _HOLE.sub("{}", s.lower())
                             for s in path_segments(p["path"]))  # fmt: skip
            target = _Target(node.key, p["api"], p["method"], p["path"], segments)
            self.by_length[len(segments)].append(target)
            for name in sdk_names(p.get("operation_id") or "", p.get("tags") or []):
                self.by_name[name].append(target)

    def fill(self, segments: tuple[str, ...], api: str | None) -> list[tuple[int, _Target]]:
        """Every endpoint whose template the segments fill, with its count of literal
        agreements, under any of its API's base paths."""
        found: list[tuple[int, _Target]] = []
        apis = [api] if api else list(self.prefixes) or [""]
        seen: set[str] = set()
        for name in apis:
            for prefix in self.prefixes[name] if name else [()]:
                if segments[: len(prefix)] != prefix:
                    continue
                rest = segments[len(prefix):]
                for target in self.by_length.get(len(rest), []):
                    if (api and target.api != api) or (name and target.api != name):
                        continue
                    score = _agree(rest, target.segments)
                    if score is not None and target.key not in seen:
                        seen.add(target.key)
                        found.append((score, target))
        return found


def match(call: CodeCall, index: _Index) -> Match | None:
    """The endpoint (or API) one call reaches, or ``None`` when it reaches none."""
    if call.style == "name":
        chain = member_chain(call.callee)
        for start in range(len(chain)):  # the longest tail first: it says the most
            targets = index.by_name.get(_bag(chain[start:]), [])
            if len({t.key for t in targets}) == 1:
                return Match(targets[0].api, "operation-id", targets[0])
        return None
    if call.path is None:
        return None
    host, segments = _split(call.path)
    api = None
    if host is not None:
        api = index.hosts.get(host)
        if api is None:
            return None
    filled = index.fill(segments, api)
    if not filled:
        return Match(api, "host") if api else None
    best = max(score for score, _ in filled)
    top = [t for score, t in filled if score == best]
    if call.method:
        same = [t for t in top if t.method == call.method]
        if same:
            return Match(same[0].api, "route" if call.style == "route" else "http", same[0])
    if len(top) == 1:
        return Match(top[0].api, "path", top[0])
    return Match(top[0].api, "ambiguous")


def link_code(files: Iterable[Node], endpoints: Iterable[Node], apis: Iterable[Node]) -> GraphBatch:
    """The code sites of every ``CodeFile`` node, and their edges (the ``links`` scope's part
    for code; the caller merges it into that batch)."""
    index = _Index(endpoints, apis)
    calls = [(f, call) for f in files for call in (CodeCall.model_validate(c)
                                                  for c in f.props.get("calls", []))]  # fmt: skip
    matches = [match(call, index) for _, call in calls]
    clients = _clients(calls, matches)
    out = GraphBatch(project="", scope="")
    functions: set[str] = set()
    for (file_node, call), found in zip(calls, matches, strict=True):
        if found is None and call.style == "path" and call.path is not None:
            api = clients.get(call.callee)
            found = Match(api, "client") if api else None
        if found is None:
            continue
        _add_site(out, file_node, call, found, functions)
    return out


def _clients(calls: list[tuple[Node, CodeCall]], matches: list[Match | None]) -> dict[str, str]:
    """Callees most of whose path calls reach one API's endpoints: the team's client for it."""
    reached: dict[str, Counter[str]] = defaultdict(Counter)
    sent: Counter[str] = Counter()
    for (_, call), found in zip(calls, matches, strict=True):
        if call.style != "path" or call.path is None:
            continue
        sent[call.callee] += 1
        if found is not None and found.target is not None:
            reached[call.callee][found.api] += 1
    out = {}
    for callee, apis in reached.items():
        if len(apis) == 1:
            api, count = apis.most_common(1)[0]
            if count * 2 > sent[callee]:
                out[callee] = api
    return out


def _add_site(out: GraphBatch, file_node: Node, call: CodeCall, found: Match,
              functions: set[str]) -> None:  # fmt: skip
    props = file_node.props
    base = file_node.key.rsplit("/file/", 1)[0]
    key = f"{base}/site/{props['path']}:{call.line}:{call.column}"
    target = found.target
    site: dict[str, Any] = {
        "code_set": props["code_set"], "root": props.get("root", ""), "file": props["path"],
        "line": call.line,
        "column": call.column, "function": call.function, "language": props["language"],
        "callee": call.callee, "text": call.text, "method": call.method, "path": call.path,
        "api": found.api, "endpoint": f"{target.method} {target.path}" if target else None,
        "endpoint_key": target.key if target else None, "matched_by": found.matched_by,
        "confidence": CONFIDENCE.get(found.matched_by, 0.0),
    }  # fmt: skip
    out.nodes.append(Node(key=key, label="CodeSite", props=site))
    owner = file_node.key
    if call.function:
        fn_key = f"{base}/function/{props['path']}#{call.function}"
        if fn_key not in functions:
            functions.add(fn_key)
            out.nodes.append(Node(key=fn_key, label="CodeFunction", props={
                "code_set": props["code_set"], "file": props["path"], "name": call.function}))  # fmt: skip
            out.edges.append(Edge(src=file_node.key, type="DEFINES", dst=fn_key))
        owner = fn_key
    out.edges.append(Edge(src=owner, type="HAS_SITE", dst=key))
    if target is not None:
        out.edges.append(Edge(src=key, type="CALLS", dst=target.key,
                              props={"matched_by": found.matched_by}))  # fmt: skip


def _split(path: str) -> tuple[str | None, tuple[str, ...]]:
    """A call's path as (host or ``None``, lower-cased segments, ``{}`` for unknown parts)."""
    host = None
    if path.startswith(("http://", "https://")):
        parts = urlsplit(path)
        host = (parts.hostname or "").lower() or None
        path = parts.path
    elif path.startswith("{}") and path[2:3] in {"/", ":"}:
        path = path[2:]  # a base URL held in a variable
    return host, tuple(s.lower() for s in path_segments(path))


def _agree(site: tuple[str, ...], template: tuple[str | None, ...]) -> int | None:
    """Literal segments agreeing, or ``None`` when the site does not fill the template."""
    score = 0
    for got, want in zip(site, template, strict=True):
        if want is None:
            continue
        if got != want:
            return None
        score += 1
    return score


def sdk_names(operation_id: str, tags: Iterable[str]) -> list[frozenset[str]]:
    """The word bags an SDK method for this operation may be named by: the operation id's words
    (``createChatCompletion``: ``client.chat.completions.create``), and those after a tag it
    starts with (``chat_postMessage`` under tag ``chat``: ``api.PostMessage``); singular, and
    of two words or more (one word, ``create``, names too many)."""
    named = [singular(w) for w in words(operation_id)]
    found = [named]
    for tag in tags:
        prefix = [singular(w) for w in words(tag)]
        if prefix and named[: len(prefix)] == prefix:
            found.append(named[len(prefix):])
    return [frozenset(n) for n in found if len(set(n)) >= 2]


def _bag(names: Iterable[str]) -> frozenset[str]:
    return frozenset(singular(w) for name in names for w in words(name))
