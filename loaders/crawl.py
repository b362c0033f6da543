"""Bounded crawling of a documentation site into :class:`DocPage` objects.

A crawl starts at one URL (a page or a sitemap) and follows the links of its pages breadth-first,
never leaving the allowed hosts: the policy's allowlist, or else the start URL's host. It is
bounded by :class:`CrawlLimits` (URLs fetched, link depth, page size and time, a delay between
requests). Every request goes through :func:`~apiatlas.loaders.fetch.fetch_text`, so robots.txt,
the address checks and the vetting of every redirect hop apply to each page; a URL that
robots.txt disallows is never requested.

URLs are canonicalised (:func:`canonical_url`; a page's ``<link rel="canonical">`` names it when
it points at an allowed host), and two URLs serving the same content are kept as one page. A page
that cannot be fetched (refused, too large, too slow, an HTTP error) is skipped with a warning and
the crawl goes on; only a start URL that fails, or a crawl that keeps no page, is an error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

from bs4 import BeautifulSoup, Tag

from apiatlas.errors import LoaderError, UsageError
from apiatlas.loaders.docs import is_markdown, is_sitemap, parse_fetched, sitemap_locations
from apiatlas.loaders.fetch import (
    Fetched,
    FetchPolicy,
    check_robots,
    check_url,
    fetch_text,
    host_matches,
)
from apiatlas.loaders.models import DocPage, LoadWarning
from apiatlas.loaders.scrubbing import scrub_pages

_log = logging.getLogger(__name__)

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Links to these are assets, not documentation: skipping them keeps the page budget for pages.
_ASSET_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".css", ".js", ".mjs", ".map",
    ".woff", ".woff2", ".ttf", ".eot", ".pdf", ".zip", ".gz", ".tgz", ".tar", ".mp3", ".mp4",
    ".webm", ".wasm",
)
_MARKDOWN_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^)]*)?\)")


@dataclass(frozen=True)
class CrawlLimits:
    """How far one crawl may go.

    Attributes:
        max_pages: Most URLs fetched (pages and sitemaps; failed and duplicate ones count too).
        max_depth: Most links followed from the start URL (0: only the start page, or only the
            pages the start sitemap lists).
        delay: Least seconds between the starts of two page requests (a politeness rate limit).
        max_page_bytes: Largest page body; a larger page is skipped with a warning.
        page_timeout: Most seconds one page may take; a slower page is skipped with a warning.

    Raises:
        UsageError: A limit is out of range.
    """

    max_pages: int = 50
    max_depth: int = 3
    delay: float = 0.2
    max_page_bytes: int = 2_000_000
    page_timeout: float = 10.0

    def __post_init__(self) -> None:
        problems = [
            f"{name}={value!r} must be {rule}"
            for name, value, ok, rule in (
                ("max_pages", self.max_pages, self.max_pages >= 1, "at least 1"),
                ("max_depth", self.max_depth, self.max_depth >= 0, "0 or more"),
                ("delay", self.delay, self.delay >= 0, "0 or more seconds"),
                ("max_page_bytes", self.max_page_bytes, self.max_page_bytes >= 1, "at least 1"),
                ("page_timeout", self.page_timeout, self.page_timeout > 0, "over 0 seconds"),
            )
            if not ok
        ]
        if problems:
            raise UsageError(f"invalid crawl limits: {'; '.join(problems)}")


@dataclass(frozen=True)
class CrawlResult:
    """What one crawl kept and skipped.

    Attributes:
        start: The canonical start URL.
        pages: The pages kept, in crawl order, secrets scrubbed; each is named by its
            canonical URL.
        warnings: One per URL skipped (refused, robots.txt, too large, too slow, HTTP error),
            and one when ``max_pages`` stopped the crawl with URLs still queued.
        duplicates: URL fetched -> URL of the page kept with the same content.
        fetched: How many URLs were requested.
    """

    start: str
    pages: list[DocPage]
    warnings: list[LoadWarning] = field(default_factory=list)
    duplicates: dict[str, str] = field(default_factory=dict)
    fetched: int = 0


def canonical_url(url: str, base: str | None = None) -> str | None:
    """The canonical form of an http(s) URL, or ``None`` for another scheme or no host.

    ``url`` is resolved against ``base``; the fragment and any ``user:password@`` are dropped,
    the scheme and host lower-cased, the default port dropped, dot segments removed and an
    empty path written ``/``. The query is kept as it is.
    """
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
        port = parts.port
    except ValueError:  # an invalid port or IPv6 literal
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    # urljoin against the root applies RFC 3986 dot-segment removal to the path.
    path = urlsplit(urljoin("http://h/", parts.path or "/")).path
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def crawl_policy(start: str, policy: FetchPolicy, limits: CrawlLimits) -> FetchPolicy:
    """The policy every request of a crawl from ``start`` runs under.

    The allowlist is the policy's, or the start URL's host; the size and time limits are the
    tighter of the policy's and the crawl's.
    """
    host = urlsplit(start).hostname or ""
    max_seconds = min(policy.max_seconds or limits.page_timeout, limits.page_timeout)
    return dataclasses.replace(
        policy,
        allowlist=policy.allowlist or (host,),
        timeout=min(policy.timeout, limits.page_timeout),
        max_bytes=min(policy.max_bytes, limits.max_page_bytes),
        max_seconds=max_seconds,
    )


def crawl(
    start: str,
    policy: FetchPolicy | None = None,
    limits: CrawlLimits | None = None,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> CrawlResult:
    """Crawl a documentation site breadth-first from ``start``, within ``limits``.

    Args:
        start: An http(s) URL of a page or a sitemap.
        policy: Fetch rules (private addresses, robots.txt, allowlist: the hosts the crawl may
            visit, by default the start URL's host only).
        limits: Pages, depth, delay, page size and time (see :class:`CrawlLimits`).
        sleep: Waits between requests (replaceable in tests).
        clock: Monotonic seconds, for the delay between requests.

    Returns:
        The pages kept, the warnings for pages skipped, and the duplicates found.

    Raises:
        FetchError: The start URL is refused or cannot be fetched (names the URL and why).
        LoaderError: The start URL is not http(s), its sitemap is broken, or no page was kept.
    """
    limits = limits or CrawlLimits()
    first = canonical_url(start)
    if first is None:
        raise LoaderError("only http and https URLs can be crawled: give a full URL", source=start)
    state = _Crawl(first, crawl_policy(first, policy or FetchPolicy(), limits), limits)
    pacer = _Pacer(limits.delay, sleep, clock)
    while state.queue and state.fetched < limits.max_pages:
        url, depth = state.queue.popleft()
        if url in state.done:  # reached meanwhile through a redirect or a canonical link
            continue
        fetched = state.fetch(url, pacer)
        if fetched is None:
            continue
        try:
            state.take(url, depth, fetched)
        except LoaderError as e:  # a broken sitemap or front matter: that URL only
            if url == first:
                raise
            state.skip(url, e)
    return state.result()


class _Pacer:
    """Keeps at least ``delay`` seconds between the starts of two requests."""

    def __init__(
        self, delay: float, sleep: Callable[[float], None], clock: Callable[[], float]
    ) -> None:
        self._delay = delay
        self._sleep = sleep
        self._clock = clock
        self._last: float | None = None

    def wait(self) -> None:
        if self._last is not None:
            remaining = self._last + self._delay - self._clock()
            if remaining > 0:
                self._sleep(remaining)
        self._last = self._clock()


class _Crawl:
    """The state of one crawl: the queue, what was seen and kept, and the warnings."""

    def __init__(self, start: str, policy: FetchPolicy, limits: CrawlLimits) -> None:
        self.start = start
        self.policy = policy
        self.limits = limits
        self.queue: deque[tuple[str, int]] = deque([(start, 0)])
        self.seen: set[str] = {start}  # queued at some point: never queued again
        self.done: set[str] = set()  # fetched, reached by a redirect, or named by a kept page
        self.fetched = 0
        self.pages: dict[str, DocPage] = {}
        self.fingerprints: dict[str, str] = {}  # content hash -> URL of the page kept
        self.duplicates: dict[str, str] = {}
        self.warnings: list[LoadWarning] = []

    @property
    def allowlist(self) -> tuple[str, ...]:
        """The hosts this crawl may visit."""
        return self.policy.allowlist

    def fetch(self, url: str, pacer: _Pacer) -> Fetched | None:
        """Fetch one URL, or record why it was skipped (the start URL's failure is raised)."""
        try:
            # Refusals and robots.txt first: a URL that may not be fetched costs no request.
            check_url(url, self.policy)
            check_robots(url, self.policy)
            pacer.wait()
            self.fetched += 1
            self.done.add(url)
            return fetch_text(url, self.policy)
        except LoaderError as e:
            if url == self.start:
                raise
            self.skip(url, e)
            return None

    def skip(self, url: str, error: LoaderError) -> None:
        """Record a warning for a URL skipped; it names the URL as its source."""
        reason = str(error)
        if error.source == url and reason.startswith(f"{url}: "):
            reason = reason[len(url) + 2 :]  # the warning's source names it already
        message = f"skipped: {reason}"
        _log.warning("%s (%s)", message, url)
        self.warnings.append(LoadWarning(message=message, source=url))

    def take(self, url: str, depth: int, fetched: Fetched) -> None:
        """Keep a fetched page (or read a sitemap) and queue the links it leads to."""
        final = canonical_url(fetched.url) or url
        if final != url:
            if final in self.done:  # redirected to a URL already crawled
                self.duplicates[url] = final
                return
            self.seen.add(final)
            self.done.add(final)
        if is_sitemap(fetched):
            for loc in sitemap_locations(final, fetched.text):
                self.enqueue(loc, depth, base=final)  # a sitemap lists pages; it is no link
            return
        links, canonical = _links(fetched, final)
        # A canonical link names the page only on an allowed host: never one the crawl avoids.
        on_site = canonical and host_matches(urlsplit(canonical).hostname or "", self.allowlist)
        name = canonical if canonical and on_site else final
        self.seen.add(name)
        self.done.add(name)
        if depth < self.limits.max_depth:
            for link in links:
                self.enqueue(link, depth + 1)
        self.keep(final, name, fetched)

    def keep(self, url: str, name: str, fetched: Fetched) -> None:
        """Keep the page as ``name`` unless a page of that name or content is kept already."""
        page = parse_fetched(fetched, source=name)
        if not page.sections:
            return  # a page of links only (its navigation is dropped as chrome)
        prints = [_digest(fetched.text), _digest(_page_text(page))]
        same = [self.fingerprints[p] for p in prints if p in self.fingerprints]
        if name in self.pages or same:
            self.duplicates[url] = name if name in self.pages else same[0]
            return
        self.pages[name] = page
        self.fingerprints.update({p: name for p in prints})

    def enqueue(self, link: str, depth: int, base: str | None = None) -> None:
        url = canonical_url(link, base)
        if url is None or url in self.seen:
            return
        parts = urlsplit(url)
        if not host_matches(parts.hostname or "", self.allowlist):
            return
        if parts.path.lower().endswith(_ASSET_SUFFIXES):
            return
        self.seen.add(url)
        self.queue.append((url, depth))

    def result(self) -> CrawlResult:
        if not self.pages:
            reasons = "; ".join(w.message for w in self.warnings[:3]) or "no page had any text"
            raise LoaderError(
                f"the crawl kept no pages ({reasons}): check the URL, --allow-host and the limits",
                source=self.start,
            )
        if self.queue:
            self.warnings.append(
                LoadWarning(
                    message=(
                        f"stopped after {self.fetched} URLs (max_pages): {len(self.queue)} more "
                        "were found and not fetched; raise the page limit to crawl them"
                    ),
                    source=self.start,
                )
            )
        pages, removed = scrub_pages(list(self.pages.values()))
        if removed:
            _log.info("scrubbed %d secret(s) from the crawl of %s", removed, self.start)
        return CrawlResult(
            start=self.start,
            pages=pages,
            warnings=self.warnings,
            duplicates=self.duplicates,
            fetched=self.fetched,
        )


def _links(fetched: Fetched, url: str) -> tuple[list[str], str | None]:
    """The absolute links of a page and its ``<link rel="canonical">`` (canonical form)."""
    if is_markdown(fetched):
        return [urljoin(url, href) for href in _MARKDOWN_LINK.findall(fetched.text)], None
    # The raw page is only read for href values here, never rendered or stored.
    soup = BeautifulSoup(fetched.text, "html.parser")
    base = url
    base_tag = soup.find("base", href=True)
    if isinstance(base_tag, Tag):
        base = urljoin(url, str(base_tag.get("href", "")))
    links = [urljoin(base, str(a.get("href", ""))) for a in soup.find_all("a", href=True)]
    canonical = None
    for tag in soup.find_all("link", href=True):
        rel = tag.get("rel") or []
        rels = rel.split() if isinstance(rel, str) else list(rel)
        if "canonical" in (r.lower() for r in rels):
            canonical = canonical_url(str(tag.get("href", "")), base)
            break
    return links, canonical


def _page_text(page: DocPage) -> str:
    return "\x1e".join(
        "\x1f".join([*section.section_path, section.text]) for section in page.sections
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="replace")).hexdigest()
