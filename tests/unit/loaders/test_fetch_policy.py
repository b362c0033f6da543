"""fetch_text against a real http.server on 127.0.0.1, and its refusals."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apiatlas.errors import FetchError, LoaderError
from apiatlas.loaders.fetch import FetchPolicy, check_url, clear_robots_cache, fetch_text

Route = tuple[int, dict[str, str], bytes]


@dataclass
class LocalSite:
    """A local web server: ``routes`` maps a path to (status, headers, body)."""

    port: int
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"


@pytest.fixture
def site() -> Iterator[LocalSite]:
    state = LocalSite(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            state.requests.append(self.path)
            status, headers, body = state.routes.get(self.path, (404, {}, b"not found"))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if "Content-Length" not in headers and not headers.get("X-No-Length"):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    # A later test may get the same port; it must not see this site's robots.txt.
    clear_robots_cache()


LOCAL = FetchPolicy(allow_private=True, timeout=5.0)
HTML = {"Content-Type": "text/html; charset=utf-8"}


def test_fetches_text_and_decodes_the_declared_charset(site: LocalSite) -> None:
    latin1 = {"Content-Type": "text/html; charset=iso-8859-1"}
    site.routes["/page"] = (200, latin1, "<p>café</p>".encode("latin-1"))
    fetched = fetch_text(site.url("/page"), LOCAL)
    assert fetched.text == "<p>café</p>"
    assert fetched.content_type == "text/html"
    assert fetched.url == site.url("/page")
    assert site.requests == ["/robots.txt", "/page"]


def test_follows_an_allowed_redirect_and_reports_the_final_url(site: LocalSite) -> None:
    site.routes["/old"] = (301, {"Location": "/new"}, b"")
    site.routes["/new"] = (200, HTML, b"<h1>New</h1>")
    fetched = fetch_text(site.url("/old"), LOCAL)
    assert fetched.url == site.url("/new")
    assert fetched.text == "<h1>New</h1>"


def test_default_policy_refuses_the_local_server_before_connecting(site: LocalSite) -> None:
    site.routes["/page"] = (200, HTML, b"secret")
    with pytest.raises(FetchError, match="allow_private=True") as info:
        fetch_text(site.url("/page"))
    assert info.value.source == site.url("/page")
    assert isinstance(info.value, LoaderError)
    assert site.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://10.0.0.1/admin",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fe80::1]/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
        "http://localhost/",
    ],
)
def test_refuses_non_public_addresses(url: str) -> None:
    with pytest.raises(FetchError, match="non-public address"):
        fetch_text(url, FetchPolicy(timeout=0.5))


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "/etc/passwd"])
def test_refuses_other_schemes(url: str) -> None:
    with pytest.raises(FetchError, match="only http and https"):
        fetch_text(url)


def test_refuses_a_host_outside_the_allowlist(site: LocalSite) -> None:
    policy = FetchPolicy(allow_private=True, allowlist=("docs.example.com", ".example.org"))
    with pytest.raises(FetchError, match="not in the allowlist"):
        fetch_text(site.url("/page"), policy)
    assert site.requests == []


def test_allowlist_matches_names_and_suffixes(site: LocalSite) -> None:
    site.routes["/page"] = (200, HTML, b"ok")
    policy = FetchPolicy(allow_private=True, allowlist=(".example.org", "localhost"))
    assert fetch_text(site.url("/page", host="localhost"), policy).text == "ok"
    with pytest.raises(FetchError, match="allowlist"):
        check_url("http://example.net/", FetchPolicy(allowlist=(".example.org",)))


def test_checks_every_redirect_hop_against_the_allowlist(site: LocalSite) -> None:
    site.routes["/hop"] = (302, {"Location": site.url("/secret", host="localhost")}, b"")
    site.routes["/secret"] = (200, HTML, b"secret")
    policy = FetchPolicy(allow_private=True, allowlist=("127.0.0.1",))
    with pytest.raises(FetchError, match="redirect .* refused"):
        fetch_text(site.url("/hop"), policy)
    assert "/secret" not in site.requests


def test_refuses_a_redirect_from_a_public_host_to_loopback(
    site: LocalSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fake network: docs.public.test resolves to a public address whose "wire" is the local
    # server, so the first hop is public and only the redirect points at loopback.
    public_ip = "93.184.216.34"
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.create_connection

    def fake_getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list:
        if host == "docs.public.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (public_ip, port))]
        return real_getaddrinfo(host, port, *args, **kwargs)

    def fake_connect(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        if address[0] == public_ip:
            address = ("127.0.0.1", site.port)
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", fake_connect)
    site.routes["/start"] = (302, {"Location": site.url("/secret")}, b"")
    site.routes["/secret"] = (200, HTML, b"secret")
    with pytest.raises(FetchError, match="redirect .* refused.*non-public address 127.0.0.1"):
        fetch_text("http://docs.public.test/start", FetchPolicy(timeout=5.0))
    assert site.requests == ["/robots.txt", "/start"]


def test_honours_robots_txt(site: LocalSite) -> None:
    robots = b"User-agent: *\nDisallow: /private\n"
    site.routes["/robots.txt"] = (200, {"Content-Type": "text/plain"}, robots)
    site.routes["/private/page"] = (200, HTML, b"private")
    site.routes["/public"] = (200, HTML, b"public")
    with pytest.raises(FetchError, match="robots.txt disallows"):
        fetch_text(site.url("/private/page"), LOCAL)
    assert "/private/page" not in site.requests
    assert fetch_text(site.url("/public"), LOCAL).text == "public"
    ignoring = FetchPolicy(allow_private=True, respect_robots=False)
    assert fetch_text(site.url("/private/page"), ignoring).text == "private"
    assert site.requests.count("/robots.txt") == 1, "robots.txt is cached per host"


def test_robots_txt_forbidden_means_disallowed(site: LocalSite) -> None:
    site.routes["/robots.txt"] = (403, {}, b"no")
    with pytest.raises(FetchError, match="robots.txt disallows"):
        fetch_text(site.url("/page"), LOCAL)


@pytest.mark.parametrize("declared", [True, False])
def test_refuses_a_body_over_max_bytes(site: LocalSite, declared: bool) -> None:
    headers = dict(HTML) if declared else {**HTML, "X-No-Length": "1"}
    site.routes["/big"] = (200, headers, b"x" * 5000)
    policy = FetchPolicy(allow_private=True, max_bytes=1000)
    with pytest.raises(FetchError, match="over the limit of 1000"):
        fetch_text(site.url("/big"), policy)


def test_http_errors_name_the_status(site: LocalSite) -> None:
    with pytest.raises(FetchError, match="HTTP 404") as info:
        fetch_text(site.url("/missing"), LOCAL)
    assert info.value.source == site.url("/missing")


def test_refuses_binary_content(site: LocalSite) -> None:
    site.routes["/logo.png"] = (200, {"Content-Type": "image/png"}, b"\x89PNG")
    with pytest.raises(FetchError, match="not text"):
        fetch_text(site.url("/logo.png"), LOCAL)


def test_unreachable_port_is_a_fetch_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = FetchPolicy(allow_private=True, respect_robots=False)
    with pytest.raises(FetchError, match="could not connect"):
        fetch_text(f"http://127.0.0.1:{port}/", policy)


def test_https_goes_through_the_vetted_tls_connection(site: LocalSite) -> None:
    # The local server speaks plain HTTP, so the TLS handshake fails: proof the https path
    # connected through our handler (a wiring bug would raise TypeError instead).
    policy = FetchPolicy(allow_private=True, respect_robots=False, timeout=5.0)
    with pytest.raises(FetchError, match="could not connect"):
        fetch_text(f"https://127.0.0.1:{site.port}/page", policy)
    with pytest.raises(FetchError, match="non-public address"):
        fetch_text(f"https://127.0.0.1:{site.port}/page")
