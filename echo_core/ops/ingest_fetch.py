"""Where ``ingest`` reads from: an http(s) URL or a local file, as bytes and a type.

``read_source(source, env)`` returns a ``FetchedSource``: the bytes (at most
``max_bytes``, ``ECHO_INGEST_MAX_BYTES``, 10 MB by default), the sniffed type (``html``,
``pdf``, ``markdown`` or ``text``) and the source as recorded in the vault (a URL without
its fragment, or a local file's absolute path).

A URL's secrets (a password, a key in the query: ``echo_core.redaction``'s rules, as
``capture`` applies them to sources) are replaced with their marker in the recorded
source and in every error message: the raw URL is only sent to the server. The redacted
URL is the source's identity, so the same URL with the same secret is the same source.

Rules:
- Only ``http`` and ``https`` URLs and local paths. A URL must be well formed: a host
  (a name, an IPv4 or a bracketed IPv6 address), a port from 1 to 65535, no space or
  control character (percent-encode them). Any other scheme (``file:``,
  ``javascript:``, ``data:``, ``ftp:``) is refused, and so is a redirect to one: redirects
  are followed here, one hop at a time (at most ``MAX_REDIRECTS``), each target checked.
- Timeouts: ``ECHO_INGEST_TIMEOUT`` seconds (15) to connect and between reads, and
  ``DEADLINE_FACTOR`` (4) times that (60 s) for the whole fetch: every redirect hop's
  connect, headers and body, so a server that trickles bytes cannot hold ingest longer.
  The standard library's HTTP client (the core imports no transport package); no proxy.
- The type comes from the bytes first (``%PDF-``, an HTML start), then the
  ``Content-Type`` header, then the file name's extension; anything else that is not
  UTF-8 text (an image, an archive) is refused.

- A remote caller (``remote=True``: a model over MCP) may give only URLs, and only of
  public hosts: a local path, or a host that resolves to a loopback, private, link-local,
  reserved or multicast address (the machine itself, its network, a cloud metadata
  service), is refused, on every redirect hop too, unless ``ECHO_INGEST_PRIVATE_HOSTS``
  is ``allow`` (a deliberate setup, e.g. an intranet wiki). The check resolves the name
  before connecting; a name that resolves differently a moment later (DNS rebinding) is
  not caught.

Errors: ``UsageError`` (2) for a malformed URL, a refused scheme or host, a bad or missing
path, a body too large, content that is not text; ``NotFoundError`` (44) for HTTP 404 /
410; ``UnavailableError`` (69) when the host cannot be reached, times out, misses the
whole-fetch deadline or answers 5xx / 429. Nothing is written.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

import attrs

from echo_core.errors import EchoError, NotFoundError, UnavailableError, UsageError
from echo_core.redaction import redact

SourceType = Literal["html", "pdf", "markdown", "text"]

MAX_BYTES = 10 * 1024 * 1024
TIMEOUT_S = 15.0
#: The whole fetch (all hops: connect, headers, body) ends within this many timeouts.
DEADLINE_FACTOR = 4
MAX_REDIRECTS = 5
USER_AGENT = "echo-memory-ingest/1 (+https://github.com/echo-memory)"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_EXTENSIONS: dict[str, SourceType] = {
    ".html": "html", ".htm": "html", ".xhtml": "html", ".pdf": "pdf",
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
}
_MEDIA: dict[str, SourceType] = {
    "text/html": "html", "application/xhtml+xml": "html", "application/pdf": "pdf",
    "text/markdown": "markdown", "text/x-markdown": "markdown", "text/plain": "text",
}
_HTML_START = re.compile(rb"^\s*(<!doctype\s+html|<html|<head|<body|<!--)", re.IGNORECASE)
WHAT = "ingest takes an http(s) URL, or a local .html, .pdf, .md or .txt file"


@attrs.frozen
class FetchedSource:
    """What was read: ``location`` as the vault records it (secrets redacted), ``is_url``,
    the raw bytes, their sniffed ``kind``, and the charset the server named (empty when
    none)."""

    location: str
    is_url: bool
    data: bytes
    kind: SourceType
    charset: str = ""
    #: the redaction rules that fired on ``location`` (a URL's password or key)
    redacted: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The last path segment (a fallback title), without its extension."""
        path = urlsplit(self.location).path if self.is_url else self.location
        stem = path.rstrip("/").rsplit("/", 1)[-1]
        return stem.rsplit(".", 1)[0] if "." in stem else stem


PRIVATE_HOSTS_ENV = "ECHO_INGEST_PRIVATE_HOSTS"


def _limit(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key, "")
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise UsageError(f"{key}={raw!r} is not a number; unset it or give a positive "
                         "number") from None
    if value <= 0:
        raise UsageError(f"{key}={raw!r} must be positive")
    return value


def clean_url(url: str) -> str:
    """``url`` as recorded and compared: scheme and host lower-cased, no fragment."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/",
                       parts.query, ""))


def is_url(source: str) -> bool:
    """Whether ``source`` names a URL (a scheme of two or more letters: ``C:\\x`` is a
    path)."""
    found = _SCHEME.match(source.strip())
    return found is not None and len(found.group(1)) > 1


_SPACE_OR_CONTROL = re.compile(r"[\x00-\x20\x7f-\xa0\s]")
#: What a host name may hold besides non-ASCII letters (an IDN): RFC 3986 unreserved.
_HOST_NAME = re.compile(r"[A-Za-z0-9._~\-\x80-\U0010ffff]+")


def _require_http(url: str, *, redirect_from: str = "") -> None:
    """Refuse ``url`` (``UsageError``) unless it is a well-formed http(s) URL (module
    docstring): checked before any lookup or connection, on every redirect hop."""
    via = f" (a redirect from {redirect_from})" if redirect_from else ""

    def bad(why: str) -> UsageError:
        return UsageError(f"source: {url[:200]!r}{via} is not a valid URL ({why}); {WHAT}")

    if _SPACE_OR_CONTROL.search(url):
        raise bad("it holds a space or a control character; percent-encode it, "
                  "e.g. a space as %20")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a bad IPv6 address or port
        raise bad(str(exc)) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise UsageError(f"source: {url[:200]!r}{via} is not an http(s) URL; {WHAT}")
    if port == 0:
        raise bad("port 0; a port is 1 to 65535")
    host = parts.hostname
    if ":" not in host and not _is_host_name(host):  # urlsplit checked an IPv6 address
        raise bad(f"host {host[:100]!r} is not a host name: letters, digits, '-' and '.', "
                  "no empty label")


def _is_host_name(host: str) -> bool:
    """Whether ``host`` is a DNS name (or an IPv4 address) the client can send: allowed
    characters, and IDNA-encodable (no empty or overlong label)."""
    if not _HOST_NAME.fullmatch(host):
        return False
    try:
        host.encode("idna")
    except UnicodeError:
        return False
    return True


#: The byte-order marks of UTF-16 (``ingest_extract`` decodes by them).
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _typed(media_type: str, suffix: str) -> SourceType | None:
    """The text type the header, else the file name, names (never ``pdf``)."""
    for kind in (_MEDIA.get(media_type), _EXTENSIONS.get(suffix.lower())):
        if kind is not None and kind != "pdf":
            return kind
    return None


def sniff(data: bytes, media_type: str, suffix: str) -> SourceType | None:
    """The type of ``data`` (see the module docstring); None when it is not text."""
    head = data[:2048]
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(_UTF16_BOMS):  # UTF-16 text holds NULs; its BOM says how to read it
        try:
            head = data.decode("utf-16")[:2048].encode("utf-8")
        except UnicodeDecodeError:
            return None
        return "html" if _HTML_START.match(head) else _typed(media_type, suffix) or "text"
    if _HTML_START.match(head):
        return "html"
    if b"\x00" in head:
        return None
    by_header = _MEDIA.get(media_type)
    if by_header is not None and by_header != "pdf":
        return by_header
    by_name = _EXTENSIONS.get(suffix.lower())
    if by_name is not None and by_name != "pdf":
        return by_name
    if media_type and not (media_type.startswith("text/")
                           or media_type in ("application/octet-stream",)):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "text"


def read_source(source: str, env: Mapping[str, str], *, remote: bool = False) -> FetchedSource:
    """Read ``source`` (module docstring); ``remote``: the caller is a model over MCP.
    Side effects: one HTTP exchange per hop."""
    source = (source or "").strip()
    if not source:
        raise UsageError(f"source: empty; {WHAT}")
    max_bytes = int(_limit(env, "ECHO_INGEST_MAX_BYTES", MAX_BYTES))
    public_only = remote and env.get(PRIVATE_HOSTS_ENV, "").strip().lower() != "allow"
    if is_url(source):
        timeout = _limit(env, "ECHO_INGEST_TIMEOUT", TIMEOUT_S)
        try:
            return _fetch_url(source, max_bytes, timeout, public_only=public_only)
        except EchoError as exc:  # its message quotes the URL: never its secrets
            shown = redact(exc.message)
            if not shown.changed:
                raise
            raise type(exc)(shown.text, exc.code) from None
    if remote:
        raise UsageError("source: over MCP, ingest takes an http(s) URL only; a local file "
                         "is ingested from the command line (`echo-memory ingest PATH`)")
    return _read_path(source, max_bytes)


def require_public_host(url: str) -> None:
    """Refuse ``url`` when its host resolves to an address that is not public (module
    docstring); an unresolvable name is left for the fetch to report."""
    import ipaddress
    import socket

    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        infos = socket.getaddrinfo(host, parts.port or None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not address.is_global or address.is_multicast:
            raise UsageError(f"source: {host!r} is {address}, not a public address: over MCP, "
                             f"ingest fetches public hosts only ({PRIVATE_HOSTS_ENV}=allow "
                             "lets it reach private ones)")


def _read_path(source: str, max_bytes: int) -> FetchedSource:
    path = Path(os.path.expanduser(source))
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise UsageError(f"source: no such file {source!r}; {WHAT}") from None
    if not resolved.is_file():
        raise UsageError(f"source: {source!r} is not a file; {WHAT}")
    suffix = resolved.suffix.lower()
    if suffix not in _EXTENSIONS:
        raise UsageError(f"source: {source!r} has the extension {suffix or '(none)'!r}; {WHAT}")
    try:
        if resolved.stat().st_size > max_bytes:
            raise UsageError(f"source: {source!r} is larger than {max_bytes} bytes "
                             "(ECHO_INGEST_MAX_BYTES)")
        data = resolved.read_bytes()
    except OSError as exc:
        raise UsageError(f"source: cannot read {source!r}: {exc.strerror}") from None
    kind = "pdf" if suffix == ".pdf" and data.startswith(b"%PDF-") else sniff(data, "", suffix)
    if kind is None or (suffix == ".pdf" and kind != "pdf"):
        raise UsageError(f"source: {source!r} is not text (nor a PDF); {WHAT}")
    return FetchedSource(str(resolved), False, data, kind)


@attrs.frozen
class _Deadline:
    """When the whole fetch of ``url`` must be over: ``at`` (``time.monotonic()``), ``s``
    seconds after it began."""

    url: str
    s: float
    at: float

    def left(self) -> float:
        """Seconds left; ``missed()`` when none."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.missed()
        return left

    def missed(self) -> UnavailableError:
        return UnavailableError(f"source: fetching {self.url!r} took longer than {self.s:g} s "
                                f"(the whole-fetch deadline: {DEADLINE_FACTOR} x "
                                "ECHO_INGEST_TIMEOUT); the server is too slow: try again "
                                "later or raise ECHO_INGEST_TIMEOUT")


def _fetch_url(url: str, max_bytes: int, timeout: float, *,
               public_only: bool = False) -> FetchedSource:
    current = url
    _require_http(current)
    total = timeout * DEADLINE_FACTOR
    deadline = _Deadline(url, total, time.monotonic() + total)
    for _ in range(MAX_REDIRECTS + 1):
        if public_only:
            require_public_host(current)
        status, headers, data = _get(current, max_bytes, timeout, deadline)
        if status in (301, 302, 303, 307, 308) and headers.get("location"):
            moved_to = headers["location"].strip()
            try:
                target = urljoin(current, moved_to)
            except ValueError:  # malformed: ``_require_http`` says how
                target = moved_to
            _require_http(target, redirect_from=current)
            current = target
            continue
        _check_status(current, status)
        media_type, _, params = headers.get("content-type", "").partition(";")
        kind = sniff(data, media_type.strip().lower(),
                     os.path.splitext(urlsplit(current).path)[1])
        if kind is None:
            said = media_type.strip()
            what = (f"declared {said}, but its bytes are not UTF-8 text (UTF-16 without a "
                    "byte-order mark?)" if said.startswith("text/") else
                    f"{said or 'binary'} content, not text")
            raise UsageError(f"source: {current!r} is {what}; {WHAT}")
        location = redact(clean_url(url))
        return FetchedSource(location.text, True, data, kind, _charset(params),
                             location.found)
    raise UsageError(f"source: {url!r} redirects more than {MAX_REDIRECTS} times")


def _get(url: str, max_bytes: int, timeout: float,
         deadline: _Deadline) -> tuple[int, dict[str, str], bytes]:
    """One GET (no redirect followed): status, headers (lower-case names), body (only for
    a status under 300; capped). The standard library's client: the core carries no
    transport package. Past ``deadline`` the socket is shut from a timer thread, which
    ends any read under way, and ``deadline.missed()`` is raised. The response is closed
    on the way out."""
    import http.client
    import ssl

    parts = urlsplit(url)
    target = urlunsplit(("", "", parts.path or "/", parts.query, "")) or "/"
    cut_off = threading.Event()
    try:
        port = parts.port
        host = parts.hostname or ""
        connect_s = min(timeout, deadline.left())
        conn: http.client.HTTPConnection = (
            http.client.HTTPSConnection(host, port, timeout=connect_s,
                                        context=ssl.create_default_context())
            if parts.scheme.lower() == "https"
            else http.client.HTTPConnection(host, port, timeout=connect_s))
        response: http.client.HTTPResponse | None = None
        try:
            with _shut_at(deadline, cut_off) as hold:
                conn.connect()
                hold(conn.sock)
                if cut_off.is_set():
                    raise deadline.missed()
                conn.request("GET", target, headers={"User-Agent": USER_AGENT,
                                                     "Accept-Encoding": "identity"})
                response = conn.getresponse()
                headers = {k.lower(): v for k, v in response.getheaders()}
                body = (_read_capped(response, url, max_bytes) if response.status < 300
                        else b"")
            if cut_off.is_set():  # a body read to the shut socket's end is cut short
                raise deadline.missed()
            return response.status, headers, body
        finally:
            if response is not None:
                response.close()
            conn.close()
    except ValueError as exc:  # a bad port, a control character in the URL
        raise UsageError(f"source: {url[:200]!r} is not a valid URL ({exc}); {WHAT}") from None
    except (OSError, http.client.HTTPException) as exc:
        if cut_off.is_set() or time.monotonic() >= deadline.at:
            raise deadline.missed() from None
        raise UnavailableError(f"source: cannot fetch {url!r} ({type(exc).__name__}: "
                               f"{exc}); check the URL and the network, then run ingest "
                               "again") from None


@contextmanager
def _shut_at(deadline: _Deadline,
             cut_off: threading.Event) -> Iterator[Callable[[Any], None]]:
    """While the block runs: when ``deadline`` passes, set ``cut_off`` and shut every
    socket given to the yielded ``hold`` (from a timer thread), which ends any read
    under way with an error or an early end of data. The socket is kept here, not read
    from the connection then: for an answer that ends when the server closes
    (HTTP/1.0, ``Connection: close``) ``http.client`` drops ``conn.sock`` while the
    response still reads from it. Before the connect there is no socket to shut: the
    connect is bounded by its own timeout, and the caller checks ``cut_off`` after
    ``hold``."""
    import socket

    held: list[Any] = []

    def cut() -> None:
        cut_off.set()
        for sock in held:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(deadline.left(), cut)
    timer.daemon = True
    timer.start()
    try:
        yield held.append
    finally:
        timer.cancel()


def _charset(params: str) -> str:
    for part in params.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset":
            return value.strip().strip('"').lower()
    return ""


def _check_status(url: str, status: int) -> None:
    if status < 400:
        return
    if status in (404, 410):
        raise NotFoundError(f"source: {url!r} answered HTTP {status} (not found); check "
                            "the URL")
    if status >= 500 or status == 429:
        raise UnavailableError(f"source: {url!r} answered HTTP {status}; try again later")
    raise UsageError(f"source: {url!r} answered HTTP {status}; check the URL and access")


def _read_capped(response: Any, url: str, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read(65536):
        size += len(chunk)
        if size > max_bytes:
            raise UsageError(f"source: {url!r} is larger than {max_bytes} bytes "
                             "(ECHO_INGEST_MAX_BYTES); nothing was ingested")
        chunks.append(chunk)
    return b"".join(chunks)
