"""Safe HTTP(S) fetching: the only module in apiatlas that touches the network.

Every hop is vetted the same way: the scheme must be http(s), the host must match the allowlist,
and every address the host resolves to must be public unless the policy allows private ones. The
check runs before the first request, again on every redirect, and once more inside the socket
layer, where the connection goes to the very address that was vetted (so a DNS answer that
changes between check and connect cannot smuggle in a private address).

Private addresses can be allowed for every host (``allow_private``) or for named hosts only
(``private_hosts``, e.g. a test server on ``127.0.0.1``): a redirect or a DNS answer that leads
anywhere else non-public is still refused, and link-local and cloud metadata addresses
(``169.254.169.254``, ``fd00:ec2::254`` ...) are never allowed through a named host.
"""

from __future__ import annotations

import dataclasses
import functools
import http.client
import ipaddress
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
import urllib.robotparser
from dataclasses import dataclass
from email.message import Message
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

import certifi

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
_READ_CHUNK = 65_536
_ROBOTS_TTL = 3600.0
_ROBOTS_MAX_BYTES = 512_000
_ROBOTS_CACHE_SIZE = 256
_TEXT_SUBTYPE_MARKERS = ("xml", "json", "yaml", "markdown", "javascript")


@dataclass(frozen=True)
class FetchPolicy:
    """What :func:`fetch_text` may fetch.

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
    """

    allow_private: bool = False
    allowlist: tuple[str, ...] = ()
    respect_robots: bool = True
    timeout: float = 10.0
    max_bytes: int = 10_000_000
    user_agent: str = "apiatlas/0.1"
    private_hosts: tuple[str, ...] = ()
    max_seconds: float | None = None


@dataclass(frozen=True)
class Fetched:
    """A fetched text document.

    Attributes:
        url: The final URL, after redirects.
        text: The decoded body.
        content_type: The media type without parameters (``text/html``), or ``""``.
    """

    url: str
    text: str
    content_type: str


def fetch_text(url: str, policy: FetchPolicy | None = None) -> Fetched:
    """Fetch a text document under ``policy``.

    Args:
        url: An http or https URL.
        policy: The rules to apply; the default refuses private hosts and obeys robots.txt.

    Returns:
        The final URL, the decoded body and its media type.

    Raises:
        FetchError: If the URL is refused by the policy, cannot be reached, answers with an
            HTTP error, is too large, or is not text.
    """
    policy = policy or FetchPolicy()
    check_url(url, policy)
    check_robots(url, policy)
    opener = _opener(policy)
    request = urllib.request.Request(url, headers={"User-Agent": policy.user_agent})
    timeout = min(policy.timeout, policy.max_seconds or policy.timeout)
    deadline = None if policy.max_seconds is None else time.monotonic() + policy.max_seconds
    try:
        with opener.open(request, timeout=timeout) as response:
            final_url = response.geturl()
            headers: Message = response.headers
            body = _read_limited(response, headers, final_url, policy.max_bytes, deadline)
    except FetchError:
        raise
    except urllib.error.HTTPError as e:
        raise FetchError(
            f"the server answered HTTP {e.code} {e.reason}: check the URL",
            source=url,
        ) from e
    except urllib.error.URLError as e:
        if isinstance(e.reason, FetchError):
            raise e.reason from e
        if isinstance(e.reason, TimeoutError):
            raise _too_slow(url, timeout) from e
        raise FetchError(
            f"could not connect ({e.reason}): check the URL and that the host is reachable",
            source=url,
        ) from e
    except TimeoutError as e:
        raise _too_slow(url, timeout) from e
    except (OSError, http.client.HTTPException) as e:
        raise FetchError(
            f"the request failed ({e}): check the URL and that the host is reachable",
            source=url,
        ) from e
    text = _decode(body, headers, final_url)
    return Fetched(url=final_url, text=text, content_type=_media_type(headers))


def _too_slow(url: str, seconds: float) -> FetchError:
    return FetchError(
        f"no complete answer within {seconds:g} s: the server is too slow; try again later or "
        "raise the time limit",
        source=url,
    )


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
    _vetted_addresses(host, port, policy, url)


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


def _vetted_addresses(
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


def _safe_create_connection(
    policy: FetchPolicy,
    address: tuple[str, int],
    timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
    source_address: tuple[str, int] | None = None,
) -> socket.socket:
    """``socket.create_connection`` that only ever connects to the addresses it vetted."""
    host, port = address
    error: OSError | None = None
    for *_, sockaddr in _vetted_addresses(host, port, policy, f"//{host}:{port}"):
        try:
            # A numeric address: create_connection does no second DNS lookup that could differ.
            return socket.create_connection((sockaddr[0], sockaddr[1]), timeout, source_address)
        except OSError as e:
            error = e
    raise error or OSError(f"no address to connect to for {host!r}")


class _SafeHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args: Any, policy: FetchPolicy, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = functools.partial(_safe_create_connection, policy)


class _SafeHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args: Any, policy: FetchPolicy, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._create_connection = functools.partial(_safe_create_connection, policy)


class _SafeHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, policy: FetchPolicy) -> None:
        super().__init__()
        self._policy = policy

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(functools.partial(_SafeHTTPConnection, policy=self._policy), req)


class _SafeHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, policy: FetchPolicy) -> None:
        super().__init__(context=ssl.create_default_context(cafile=certifi.where()))
        self._policy = policy

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(
            functools.partial(_SafeHTTPSConnection, policy=self._policy),
            req,
            context=self._context,  # type: ignore[attr-defined]
        )


class _SafeRedirectHandler(urllib.request.HTTPRedirectHandler):
    """Vets every redirect target exactly like the first URL."""

    def __init__(self, policy: FetchPolicy) -> None:
        super().__init__()
        self._policy = policy

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Message,
        newurl: str,
    ) -> urllib.request.Request | None:
        try:
            check_url(newurl, self._policy)
            check_robots(newurl, self._policy)
        except FetchError as e:
            raise FetchError(
                f"redirect from {req.full_url} refused: {e}", source=newurl
            ) from e
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _opener(policy: FetchPolicy) -> urllib.request.OpenerDirector:
    # An empty ProxyHandler keeps environment proxies out: a proxy would connect on our behalf
    # to addresses we never vetted.
    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        _SafeHTTPHandler(policy),
        _SafeHTTPSHandler(policy),
        _SafeRedirectHandler(policy),
    )


def _read_limited(
    response: IO[bytes], headers: Message, url: str, max_bytes: int, deadline: float | None
) -> bytes:
    declared = headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise FetchError(
            f"the document is {declared} bytes, over the limit of {max_bytes}: raise max_bytes",
            source=url,
        )
    # read1 returns what has arrived, so the deadline is checked while a slow body trickles in.
    read = getattr(response, "read1", response.read)
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        if deadline is not None and time.monotonic() > deadline:
            raise FetchError(
                "the body did not arrive within the time limit: the server is too slow; try "
                "again later or raise the time limit",
                source=url,
            )
        chunk = read(min(_READ_CHUNK, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise FetchError(
            f"the document is over the limit of {max_bytes} bytes: raise max_bytes",
            source=url,
        )
    return b"".join(chunks)


def _media_type(headers: Message) -> str:
    if headers.get("Content-Type") is None:
        return ""
    return headers.get_content_type().lower()


def _decode(body: bytes, headers: Message, url: str) -> str:
    media = _media_type(headers)
    main, _, sub = media.partition("/")
    if media and main != "text" and not any(m in sub for m in _TEXT_SUBTYPE_MARKERS):
        raise FetchError(
            f"the document is {media!r}, not text: give the URL of an HTML or Markdown page",
            source=url,
        )
    charset = headers.get_content_charset() or "utf-8"
    try:
        # Replace stray bytes rather than fail: one bad byte should not lose a whole page.
        return body.decode(charset, errors="replace")
    except LookupError as e:
        raise FetchError(
            f"the server declared an unknown charset {charset!r}: fetch the page another way",
            source=url,
        ) from e


_robots_lock = threading.Lock()
_RobotsKey = tuple[str, str, bool, tuple[str, ...]]
_robots_cache: dict[_RobotsKey, tuple[float, urllib.robotparser.RobotFileParser]] = {}


def clear_robots_cache() -> None:
    """Forget every cached robots.txt (they are otherwise kept for an hour per host)."""
    with _robots_lock:
        _robots_cache.clear()


def check_robots(url: str, policy: FetchPolicy) -> None:
    """Refuse a URL the host's robots.txt disallows for ``policy.user_agent``.

    Does nothing when ``policy.respect_robots`` is off. robots.txt is cached per host.

    Raises:
        FetchError: robots.txt disallows the URL, or cannot be read (other than a 4xx).
    """
    if not policy.respect_robots:
        return
    parser = _robots_for(url, policy)
    if not parser.can_fetch(policy.user_agent, url):
        raise FetchError(
            "robots.txt disallows this URL for our user agent: respect the site's wishes, or "
            "pass respect_robots=False if you own the site",
            source=url,
        )


def _robots_for(url: str, policy: FetchPolicy) -> urllib.robotparser.RobotFileParser:
    parts = urlsplit(url)
    key = (parts.scheme, parts.netloc.lower(), policy.allow_private, policy.private_hosts)
    now = time.monotonic()
    with _robots_lock:
        cached = _robots_cache.get(key)
        if cached and now - cached[0] < _ROBOTS_TTL:
            return cached[1]
    robots_url = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
    parser = urllib.robotparser.RobotFileParser(robots_url)
    robots_policy = dataclasses.replace(
        policy, respect_robots=False, max_bytes=_ROBOTS_MAX_BYTES
    )
    try:
        parser.parse(fetch_text(robots_url, robots_policy).text.splitlines())
    except FetchError as e:
        status = _http_status(e)
        if status in (401, 403):
            parser.disallow_all = True
        elif status is not None and 400 <= status < 500:
            # RFC 9309: an unavailable robots.txt (4xx) means no restrictions.
            parser.allow_all = True
        else:
            raise FetchError(
                f"robots.txt at {robots_url} could not be read ({e}); try again later, or pass "
                "respect_robots=False if you own the site",
                source=url,
            ) from e
    with _robots_lock:
        if len(_robots_cache) >= _ROBOTS_CACHE_SIZE:
            _robots_cache.clear()
        _robots_cache[key] = (now, parser)
    return parser


def _http_status(error: FetchError) -> int | None:
    cause = error.__cause__
    return cause.code if isinstance(cause, urllib.error.HTTPError) else None
