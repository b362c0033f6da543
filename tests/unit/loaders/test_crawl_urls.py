"""Canonical URLs and crawl limits, and the per-host private-address rule of the fetcher."""

from __future__ import annotations

import socket

import pytest

from apiatlas.errors import FetchError, UsageError
from apiatlas.loaders.crawl import CrawlLimits, canonical_url, crawl, crawl_policy
from apiatlas.loaders.fetch import FetchPolicy, check_url, host_matches


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        ("HTTP://Docs.Example.COM:80/a#intro", None, "http://docs.example.com/a"),
        ("https://docs.example.com:443", None, "https://docs.example.com/"),
        ("https://Docs.example.com:8443/a?b=1&a=2",
         None, "https://docs.example.com:8443/a?b=1&a=2"),
        ("http://user:secret@docs.example.com/a", None, "http://docs.example.com/a"),
        ("http://docs.example.com./x/../y/./z", None, "http://docs.example.com/y/z"),
        ("../guide/b.html#top", "http://h.example/guide/a.html", "http://h.example/guide/b.html"),
        ("?page=2", "http://h.example/list", "http://h.example/list?page=2"),
        ("http://[::1]:80/", None, "http://[::1]/"),
        ("  /padded  ", "http://h.example/", "http://h.example/padded"),
    ],
)
def test_canonical_url(url: str, base: str | None, expected: str) -> None:
    assert canonical_url(url, base) == expected


@pytest.mark.parametrize(
    "url",
    ["mailto:docs@example.com", "javascript:alert(1)", "ftp://h.example/x", "http:///nohost",
     "http://h.example:99999/", "data:text/html,hi", "/relative/without/base"],
)
def test_canonical_url_refuses_what_cannot_be_crawled(url: str) -> None:
    assert canonical_url(url) is None


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_pages", 0), ("max_depth", -1), ("delay", -0.1), ("max_page_bytes", 0),
     ("page_timeout", 0.0)],
)
def test_crawl_limits_refuse_values_out_of_range(field: str, value: float) -> None:
    with pytest.raises(UsageError, match=f"{field}="):
        CrawlLimits(**{field: value})  # type: ignore[arg-type]


def test_crawl_policy_keeps_to_the_start_host_and_the_tighter_limits() -> None:
    limits = CrawlLimits(max_page_bytes=1000, page_timeout=2.0)
    policy = crawl_policy("https://docs.example.com/", FetchPolicy(timeout=30.0), limits)
    assert policy.allowlist == ("docs.example.com",)
    assert (policy.timeout, policy.max_seconds, policy.max_bytes) == (2.0, 2.0, 1000)
    given = FetchPolicy(allowlist=(".example.com",), timeout=1.0, max_bytes=10)
    narrowed = crawl_policy("https://docs.example.com/", given, limits)
    assert narrowed.allowlist == (".example.com",)
    assert (narrowed.timeout, narrowed.max_bytes) == (1.0, 10)


def test_crawl_of_a_non_http_url_is_a_loader_error() -> None:
    with pytest.raises(UsageError, match="only http and https"):
        crawl("file:///etc/passwd")


def test_host_matches_names_and_suffixes() -> None:
    assert host_matches("Docs.Example.com.", ("docs.example.com",))
    assert host_matches("example.com", (".example.com",))
    assert host_matches("a.example.com", (".example.com",))
    assert not host_matches("badexample.com", (".example.com",))
    assert not host_matches("docs.example.com", ())


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fake resolver: host name -> the one address it answers."""
    answers: dict[str, str] = {}
    real = socket.getaddrinfo

    def fake(host: str, port: int, *args: object, **kwargs: object) -> list:
        if host in answers:
            family = socket.AF_INET6 if ":" in answers[host] else socket.AF_INET
            return [(family, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return answers


@pytest.mark.parametrize("address", ["10.1.2.3", "127.0.0.1", "fd12:3456::1", "::1"])
def test_a_private_host_may_resolve_to_private_addresses(
    dns: dict[str, str], address: str
) -> None:
    dns["docs.internal.test"] = address
    policy = FetchPolicy(private_hosts=("docs.internal.test",))
    check_url("http://docs.internal.test/guide", policy)  # no error
    with pytest.raises(FetchError, match=f"non-public address {address}"):
        check_url("http://docs.internal.test/guide", FetchPolicy())


@pytest.mark.parametrize(
    "address", ["169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200",
                "::ffff:169.254.169.254", "169.254.1.1", "fe80::1"],
)
def test_a_private_host_never_reaches_link_local_or_metadata_addresses(
    dns: dict[str, str], address: str
) -> None:
    dns["docs.internal.test"] = address
    policy = FetchPolicy(private_hosts=("docs.internal.test",))
    with pytest.raises(FetchError, match="link-local or cloud metadata address"):
        check_url("http://docs.internal.test/", policy)
    check_url("http://docs.internal.test/", FetchPolicy(allow_private=True))  # allowed by all


def test_only_the_named_hosts_get_private_addresses(dns: dict[str, str]) -> None:
    dns["docs.internal.test"] = "10.0.0.5"
    dns["rebound.example.com"] = "10.0.0.5"
    policy = FetchPolicy(private_hosts=("docs.internal.test",))
    with pytest.raises(FetchError, match="rebound.example.com.*non-public address 10.0.0.5"):
        check_url("http://rebound.example.com/", policy)
    with pytest.raises(FetchError, match="non-public address 169.254.169.254"):
        check_url("http://169.254.169.254/latest/meta-data/", policy)
    with pytest.raises(FetchError, match="non-public address 10.0.0.1"):
        check_url("http://10.0.0.1/", policy)
