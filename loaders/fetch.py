"""Safe HTTP(S) fetching: the only module in apiatlas that touches the network.

Every hop is vetted the same way: the scheme must be http(s), the host must match the allowlist,
and every address the host resolves to must be public unless the policy allows private ones. The
check runs before the first request, again on every redirect, and once more inside the socket
layer, where the connection goes to the very address that was vetted (so a DNS answer that
changes between check and connect cannot smuggle in a private address). The policy and those
checks (which resolve host names but never connect) live in :mod:`apiatlas.loaders.fetch_policy`
and are importable from here too.
"""

from __future__ import annotations

import dataclasses
import functools
import http.client
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
from apiatlas.loaders.fetch_policy import (
    FetchPolicy,
    check_url,
    host_matches,
    vetted_addresses,
)

__all__ = [
    "FetchPolicy",
    "Fetched",
    "check_robots",
    "check_url",
    "clear_robots_cache",
    "fetch_text",
    "host_matches",
]

_READ_CHUNK = 65_536
_ROBOTS_TTL = 3600.0
_ROBOTS_MAX_BYTES = 512_000
_ROBOTS_CACHE_SIZE = 256
_TEXT_SUBTYPE_MARKERS = ("xml", "json", "yaml", "markdown", "javascript")


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




def _safe_create_connection(
    policy: FetchPolicy,
    address: tuple[str, int],
    timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
    source_address: tuple[str, int] | None = None,
) -> socket.socket:
    """``socket.create_connection`` that only ever connects to the addresses it vetted."""
    host, port = address
    error: OSError | None = None
    for *_, sockaddr in vetted_addresses(host, port, policy, f"//{host}:{port}"):
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
