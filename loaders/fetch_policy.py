"""The fetch policy and the checks of a URL and its addresses against it, before any connection.

:class:`FetchPolicy` says what :func:`~apiatlas.loaders.fetch.fetch_text` may fetch;
:func:`check_url` refuses a URL whose scheme, host or resolved addresses the policy does not
allow, and :func:`vetted_addresses` resolves a host (DNS only, no connection) and refuses any
address that is not public. The fetcher runs these checks before the first request, on every
redirect and inside its socket layer, which then connects only to the vetted addresses.

Private addresses can be allowed for every host (``allow_private``) or for named hosts only
(``private_hosts``, e.g. a test server on ``127.0.0.1``): a redirect or a DNS answer that leads
anywhere else non-public is still refused, and link-local and cloud metadata addresses
(``169.254.169.254``, ``fd00:ec2::254`` ...) are never allowed through a named host.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from apiatlas.errors import FetchError

_PRIVATE_HINT = (
    "pass private_hosts=(HOST,) / --allow-private HOST (that host only) or allow_private=True / "
    "--allow-private (every host) if you really mean a local server"
)
_METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean instance metadata
        "169.254.170.2",  # AWS ECS task metadata and credentials
        "fd00:ec2::254",  # AWS instance metadata over IPv6
        "100.100.100.200",  # Alibaba Cloud instance metadata
    )
)


@dataclass(frozen=True)
class FetchPolicy:
    """What :func:`~apiatlas.loaders.fetch.fetch_text` may fetch.

    Attributes:
        allow_private: Allow loopback, private, link-local and reserved addresses for every host.
        allowlist: Host names (``docs.example.com``) or suffixes (``.example.com``, which also
            matches ``example.com``). Empty means any public host.
        respect_robots: Fetch and obey the host's robots.txt.
        timeout: Seconds for each connection and read.
        max_bytes: Largest body accepted.
        user_agent: Sent with every request and matched against robots.txt rules.
        private_hosts: Hosts (names, IP literals or ``.suffix`` entries, as in ``allowlist``)
            that may resolve to loopback and private addresses while ``allow_private`` is off.
            Link-local and cloud metadata addresses stay refused for them, and every other host
            (a redirect target included) is vetted as usual.
        max_seconds: Longest one fetch may take, body included; checked between reads, so a
            fetch ends at most one ``timeout`` later (``None``: only ``timeout`` bounds each
            connection and read, and a server trickling bytes is never cut off).
        read_outside: Let a local spec's ``$ref`` and a docs folder's links read files outside
            the folder given (a spec file's own folder, or the folder ingested).
    """

    allow_private: bool = False
    allowlist: tuple[str, ...] = ()
    respect_robots: bool = True
    timeout: float = 10.0
    max_bytes: int = 10_000_000
    user_agent: str = "apiatlas/0.1"
    private_hosts: tuple[str, ...] = ()
    max_seconds: float | None = None
    read_outside: bool = False


def check_url(url: str, policy: FetchPolicy) -> None:
    """Refuse a URL the policy does not allow, before any connection is made.

    Raises:
        FetchError: If the scheme is not http(s), the host is outside the allowlist, or it
            resolves to a non-public address while ``allow_private`` is off.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchError(
            f"only http and https URLs can be fetched, not {parts.scheme or 'a bare path'!r}",
            source=url,
        )
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise FetchError("the URL has no host name: give a full http(s) URL", source=url)
    if policy.allowlist and not host_matches(host, policy.allowlist):
        raise FetchError(
            f"host {host!r} is not in the allowlist {list(policy.allowlist)}: add it to allow it",
            source=url,
        )
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:
        raise FetchError(f"the URL has an invalid port: {e}", source=url) from e
    vetted_addresses(host, port, policy, url)


def host_matches(host: str, entries: tuple[str, ...]) -> bool:
    """Whether ``host`` is one of ``entries``: names, or ``.suffix`` entries that also match
    the bare domain (``.example.com`` matches ``example.com`` and ``docs.example.com``)."""
    host = host.rstrip(".").lower()
    for entry in entries:
        entry = entry.strip().rstrip(".").lower()
        if host == entry.lstrip(".") or (entry.startswith(".") and host.endswith(entry)):
            return True
    return False


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _unmapped(ip: IPAddress) -> IPAddress:
    # An IPv4-mapped IPv6 address (::ffff:127.0.0.1) reaches the IPv4 host, so judge that host.
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _is_public(ip: IPAddress) -> bool:
    ip = _unmapped(ip)
    return not (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
        or not ip.is_global
    )


def vetted_addresses(
    host: str, port: int, policy: FetchPolicy, url: str
) -> list[tuple[Any, ...]]:
    """Resolve ``host`` and return its getaddrinfo entries, refusing any non-public address."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise FetchError(
            f"could not resolve host {host!r} ({e}): check the URL", source=url
        ) from e
    if not infos:
        raise FetchError(f"host {host!r} has no addresses: check the URL", source=url)
    if not policy.allow_private:
        named = host_matches(host, policy.private_hosts)
        for info in infos:
            ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
            refusal = _refusal(host, _unmapped(ip), named)
            if refusal:
                raise FetchError(refusal, source=url)
    return infos


def _refusal(host: str, ip: IPAddress, named: bool) -> str | None:
    """Why ``host`` may not be reached at ``ip`` (``named``: it is one of the private hosts)."""
    if _is_public(ip):
        return None
    if not named:
        return f"refused: host {host!r} resolves to non-public address {ip}; {_PRIVATE_HINT}"
    if ip.is_link_local or ip in _METADATA_ADDRESSES:
        return (
            f"refused: host {host!r} resolves to link-local or cloud metadata address {ip}, "
            "which a single allowed host never reaches; pass allow_private=True / "
            "--allow-private only if you really mean to fetch it"
        )
    return None
