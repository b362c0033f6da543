"""load_docs on URLs: HTML and Markdown pages and sitemaps served by a local http.server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apiatlas.errors import FetchError, LoaderError
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.fetch import FetchPolicy, clear_robots_cache

LOCAL = FetchPolicy(allow_private=True, timeout=5.0)

GUIDE_HTML = b"""<html><head><title>Orders guide</title><script>alert(1)</script></head>
<body><nav>Top menu</nav><main>
<h1>Orders guide</h1><p>Orders collect <a href="/items">items</a>.</p>
<h2>Create an order</h2><p>Use <code>POST /v1/orders</code>.</p>
<pre><code>curl -X POST https://api.example.com/v1/orders</code></pre>
</main><footer>Footer</footer></body></html>"""

NOTES_MD = b"""---
title: Release notes
---
## v2

Added refunds.
"""


class Site:
    """A local web server serving ``pages`` (path -> (content type, body)) and logging paths."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, bytes]] = {}
        self.requests: list[str] = []
        self.port = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def site() -> Iterator[Site]:
    state = Site()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            state.requests.append(self.path)
            content_type, body = state.pages.get(self.path, ("text/plain", b"missing"))
            self.send_response(200 if self.path in state.pages else 404)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    state.pages["/guide.html"] = ("text/html; charset=utf-8", GUIDE_HTML)
    state.pages["/notes.md"] = ("text/markdown; charset=utf-8", NOTES_MD)
    yield state
    server.shutdown()
    server.server_close()
    clear_robots_cache()


def _sitemap(*urls: str, index: bool = False) -> bytes:
    outer, inner = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    entries = "".join(f"<{inner}><loc>{u}</loc></{inner}>" for u in urls)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<{outer} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</{outer}>'
    ).encode()


def test_html_page_loads_through_load_docs(site: Site) -> None:
    [page] = load_docs(site.url("/guide.html"), fetch_policy=LOCAL)
    assert page.source == site.url("/guide.html")
    assert page.title == "Orders guide"
    assert [(s.section_path, s.anchor) for s in page.sections] == [
        (["Orders guide"], "orders-guide"),
        (["Orders guide", "Create an order"], "create-an-order"),
    ]
    assert f"[items]({site.url('/items')})" in page.sections[0].text
    create = page.sections[1].text
    assert "`POST /v1/orders`" in create and "```\ncurl -X POST" in create
    everything = " ".join(s.text for s in page.sections)
    assert "alert" not in everything and "Top menu" not in everything
    assert "Footer" not in everything


def test_markdown_url_uses_the_markdown_parser(site: Site) -> None:
    [page] = load_docs(site.url("/notes.md"), fetch_policy=LOCAL)
    assert page.title == "Release notes"
    assert [(s.section_path, s.text) for s in page.sections] == [
        (["Release notes", "v2"], "Added refunds.")
    ]


def test_sitemap_loads_every_listed_page(site: Site) -> None:
    site.pages["/sitemap.xml"] = (
        "application/xml",
        _sitemap(site.url("/guide.html"), site.url("/notes.md"), site.url("/guide.html")),
    )
    pages = load_docs(site.url("/sitemap.xml"), fetch_policy=LOCAL)
    assert [p.title for p in pages] == ["Orders guide", "Release notes"]
    assert site.requests.count("/guide.html") == 1


def test_sitemap_index_is_followed(site: Site) -> None:
    site.pages["/pages.xml"] = ("text/xml", _sitemap(site.url("/notes.md")))
    site.pages["/sitemap.xml"] = ("text/xml", _sitemap(site.url("/pages.xml"), index=True))
    pages = load_docs(site.url("/sitemap.xml"), fetch_policy=LOCAL)
    assert [p.title for p in pages] == ["Release notes"]


def test_sitemap_listing_itself_stops(site: Site) -> None:
    site.pages["/sitemap.xml"] = ("text/xml", _sitemap(site.url("/sitemap.xml")))
    with pytest.raises(LoaderError, match="nested too deeply"):
        load_docs(site.url("/sitemap.xml"), fetch_policy=LOCAL)


def test_sitemap_with_entities_is_refused(site: Site) -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]>'
        b"<urlset><url><loc>&a;</loc></url></urlset>"
    )
    site.pages["/sitemap.xml"] = ("application/xml", bomb)
    with pytest.raises(LoaderError, match="DOCTYPE"):
        load_docs(site.url("/sitemap.xml"), fetch_policy=LOCAL)


def test_sitemap_pages_follow_the_same_policy(site: Site) -> None:
    elsewhere = site.url("/guide.html").replace("127.0.0.1", "localhost")
    site.pages["/sitemap.xml"] = ("text/xml", _sitemap(elsewhere))
    policy = FetchPolicy(allow_private=True, allowlist=("127.0.0.1",), timeout=5.0)
    with pytest.raises(FetchError, match="not in the allowlist"):
        load_docs(site.url("/sitemap.xml"), fetch_policy=policy)
    assert "/guide.html" not in site.requests


def test_default_policy_refuses_a_local_url(site: Site) -> None:
    with pytest.raises(FetchError, match="allow_private"):
        load_docs(site.url("/guide.html"))
    assert site.requests == []
