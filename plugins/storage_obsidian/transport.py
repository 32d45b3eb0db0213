"""HTTP plumbing of the Obsidian backend: one pooled ``httpx.Client``, TLS trust, and the
mapping of the Local REST API's failures to echo-memory's errors.

Error mapping (every request goes through ``ObsidianHttp.send``):

* connection refused, DNS failure, timeouts, a connection broken mid-request (a body
  cut short of its Content-Length too), a body delimited only by the connection closing
  (it cannot be known to be whole), an answer not complete within ``timeout`` s of the
  request's start (the overall deadline: connecting, sending, headers and body together;
  ``plugins.storage_obsidian.deadline``), and any 5xx, 408 or 429 answer ->
  ``BackendUnavailable`` (the message names the server and the cause);
* a 2xx answer over the request's cap (its Content-Length, or its body growing past the
  cap while read: reading stops there) -> ``EchoError`` 1 naming the cap; a note's answer
  is capped at ``NOTE_CAP`` (the project's note size limit), other API answers at
  ``ANSWER_CAP``; an error answer is read up to ``ERROR_READ_CAP`` bytes only;
* a redirect (3xx) -> ``EchoError`` 78 naming where it points: redirects are never
  followed (the API key would go along), the vault URL must name the final address;
* 401 / 403 -> ``EchoError`` 78 ("check the API key", naming where the key comes from);
* a TLS certificate that fails verification -> ``EchoError`` 78 naming the options that
  trust it (``ca_file``) or pin it (``cert_fingerprint``); verification is never skipped;
* other statuses are returned to the caller, which maps 404 / 400 / 405 per operation
  (``api_error`` builds the message from the API's ``{errorCode, message}`` body) and
  checks a 200's media type with ``require_type``.

A message quotes what the server said only as an ``excerpt`` (``EXCERPT_CHARS``
characters at most, control characters escaped): a server cannot flood a terminal or a log.

httpx is imported here, and this module is imported only when an Obsidian vault is
opened; ``require_httpx`` turns a missing httpx into a clear ``EchoError`` (78).
"""

from __future__ import annotations

import hashlib
import json
import ssl
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from echo_core import BackendUnavailable, EchoError, ExitCode
from plugins.storage_obsidian.deadline import deadline, wrap_transport
from plugins.storage_obsidian.limits import ANSWER_CAP, ERROR_READ_CAP, NOTE_CAP, excerpt
from plugins.storage_obsidian.url_text import shown_url

if TYPE_CHECKING:
    import httpx

FINGERPRINT_PREFIX = "sha256:"
KEY_HINT = (
    "set OBSIDIAN_API_KEY, or `key` / `key_env` under [backends.obsidian] in the config "
    "file (the key is shown in Obsidian under Settings -> Local REST API)"
)


def key_hint(source: str) -> str:
    """What to do about a refused key read from ``source`` ("the environment variable
    OBSIDIAN_API_KEY", "`key` under [backends.obsidian] in the config file"); "" gives
    ``KEY_HINT``."""
    if not source:
        return KEY_HINT
    return (f"the key was read from {source}: set it there to the key Obsidian shows under "
            "Settings -> Local REST API (or set `key` / `key_env` under [backends.obsidian] "
            "in the config file)")
TRUST_HINT = (
    "the Local REST API serves a self-signed certificate: download it from "
    "{base}/obsidian-local-rest-api.crt (or Obsidian's plugin settings) and set "
    '`ca_file = "/path/obsidian.crt"` under [backends.obsidian], or pin it with '
    '`cert_fingerprint = "sha256:<hex>"` (openssl x509 -noout -fingerprint -sha256 -in '
    "obsidian.crt)"
)


def require_httpx() -> Any:
    """Import and return the ``httpx`` module, or raise ``EchoError`` (78) saying how to
    install it."""
    try:
        import httpx
    except ImportError:
        raise EchoError(
            "the Obsidian backend needs the httpx package, which is not installed; "
            "install it with: pip install 'echo-memory[obsidian]'",
            ExitCode.NOT_CONFIGURED,
        ) from None
    return httpx


def normalize_fingerprint(text: str) -> str:
    """``"sha256:AB:cd..."`` -> ``"sha256:abcd..."`` (64 hex digits), else ``EchoError`` 78."""
    body = text.strip()
    if body.lower().startswith(FINGERPRINT_PREFIX):
        body = body[len(FINGERPRINT_PREFIX) :]
    digits = body.replace(":", "").replace(" ", "").lower()
    if len(digits) != 64 or any(c not in "0123456789abcdef" for c in digits):
        raise EchoError(
            f"cert_fingerprint {text!r} is not a SHA-256 fingerprint; give it as "
            '"sha256:" followed by 64 hex digits (colons allowed)',
            ExitCode.NOT_CONFIGURED,
        )
    return FINGERPRINT_PREFIX + digits


class CertificatePinMismatch(ssl.SSLCertVerificationError):
    """The server's certificate does not have the pinned SHA-256 fingerprint."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(f"certificate fingerprint {actual} does not match the pin {expected}")
        self.expected = expected
        self.actual = actual


def pinned_context(fingerprint: str) -> ssl.SSLContext:
    """A TLS client context that accepts exactly the certificate with ``fingerprint``.

    Chain and hostname checks are replaced by the pin (the certificate is self-signed);
    the pin is checked right after every handshake, before any request byte is sent.
    """
    expected = normalize_fingerprint(fingerprint)

    class _PinnedSocket(ssl.SSLSocket):
        def do_handshake(self, block: bool = False) -> None:
            super().do_handshake(block)
            der = self.getpeercert(binary_form=True) or b""
            actual = FINGERPRINT_PREFIX + hashlib.sha256(der).hexdigest()
            if actual != expected:
                self.close()
                raise CertificatePinMismatch(expected, actual)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.sslsocket_class = _PinnedSocket
    return context


def tls_verify(verify: bool | str) -> bool | ssl.SSLContext:
    """What ``httpx`` gets as ``verify``: the system/certifi trust (``True``), a context
    trusting one CA file, or a pinned context (``"sha256:..."``).

    ``False`` is refused (``EchoError`` 78): verification is never switched off.
    """
    if verify is True:
        return True
    if verify is False or not isinstance(verify, str) or not verify.strip():
        raise EchoError(
            "TLS verification cannot be turned off for the Obsidian backend; trust its "
            'certificate with `ca_file = "/path/obsidian.crt"` or pin it with '
            '`cert_fingerprint = "sha256:..."` under [backends.obsidian], or use the '
            "plain-HTTP port with an obsidian+http:// vault URL",
            ExitCode.NOT_CONFIGURED,
        )
    if verify.strip().lower().startswith(FINGERPRINT_PREFIX):
        return pinned_context(verify)
    try:
        return ssl.create_default_context(cafile=verify)
    except (OSError, ssl.SSLError) as exc:
        raise EchoError(
            f"ca_file {verify!r} cannot be used as a certificate ({exc}); point ca_file "
            "at the PEM certificate of the Obsidian Local REST API",
            ExitCode.NOT_CONFIGURED,
        ) from None


#: For plain-HTTP servers: httpx wants a context, but none is ever used (nothing to load).
_UNUSED_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _tls_failure(exc: BaseException) -> ssl.SSLError | None:
    """The TLS verification error behind a connect error, if that is what it was."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return current
        if isinstance(current, ssl.SSLError) and "CERTIFICATE_VERIFY_FAILED" in str(current):
            return current
        current = current.__cause__ or current.__context__
    if "CERTIFICATE_VERIFY_FAILED" in str(exc) or "does not match the pin" in str(exc):
        return ssl.SSLError(str(exc))
    return None


#: "No value" for ``patch_instruction`` (``None`` is a JSON value: null).
UNSET: Any = object()


def patch_instruction(
    operation: str,
    target_type: str,
    target: str | Sequence[str] | None,
    content: str | None = None,
    value: Any = UNSET,
    create_target_if_missing: bool = False,
) -> dict[str, Any]:
    """The JSON body of a 5.x PATCH: a heading ``target`` is an array of heading texts
    (a lone string becomes a one-element array); block and frontmatter targets are
    strings. ``content`` carries markdown, ``value`` JSON (frontmatter values)."""
    if target is not None and not isinstance(target, str):
        target = list(target)
    elif target_type == "heading" and isinstance(target, str):
        target = [target]
    instruction: dict[str, Any] = {
        "operation": operation, "targetType": target_type, "target": target,
    }
    if content is not None:
        instruction["content"] = content
    if value is not UNSET:
        instruction["value"] = value
    if create_target_if_missing:
        instruction["createTargetIfMissing"] = True
    return instruction


def api_error(response: httpx.Response) -> str:
    """``"<status> <errorCode>: <message>"`` from an API error body, else ``"<status>
    <the body>"`` (a proxy's page, a body cut at ``ERROR_READ_CAP``); what the server
    said is quoted as an ``excerpt``."""
    detail = ""
    try:
        body = json.loads(response.content.decode("utf-8"))
        if isinstance(body, dict):
            code, message = (excerpt(str(body.get(key, ""))) for key in ("errorCode", "message"))
            detail = f" {code}: {message}".rstrip(": ")
    except (UnicodeDecodeError, ValueError):
        text = response.content.decode("utf-8", errors="replace").strip()
        detail = f" {excerpt(text)}" if text else ""
    return f"{response.status_code}{detail}"


#: What a note's GET may answer with (``Accept: text/markdown``); a note is ``*.md``.
NOTE_TYPES = ("text/markdown", "text/plain")


def media_type(response: httpx.Response) -> str:
    """The response's media type, lower case, parameters dropped ("" when none)."""
    value: str = response.headers.get("content-type", "")
    return value.split(";")[0].strip().lower()


def require_type(response: httpx.Response, accepted: Sequence[str], what: str) -> None:
    """Raise ``BackendUnavailable`` unless the 200 answer to ``what`` ("GET /vault/x.md")
    has one of the ``accepted`` media types: anything else (an HTML error page from a
    proxy, a missing type) is not the API's answer, and its body is never taken as data."""
    found = media_type(response)
    if found not in accepted:
        raise BackendUnavailable(
            f"the answer to {what} has Content-Type {found or '(none)'!r}, not "
            f"{' or '.join(accepted)} as the Obsidian Local REST API sends; nothing was taken "
            "from it - check that the vault URL points at the Local REST API, then retry"
        )


class ObsidianHttp:
    """One pooled HTTP client to one Local REST API server (thread-safe).

    ``send`` returns the response for any status below 500 other than 401/403, and raises
    the mapped error otherwise (see the module docstring).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        verify: bool | str = True,
        timeout: float = 10.0,
        max_connections: int = 8,
        key_source: str = "",
    ) -> None:
        module = require_httpx()
        self.key_hint = key_hint(key_source)
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        transport = module.HTTPTransport(
            verify=tls_verify(verify) if self.base_url.startswith("https:") else _UNUSED_TLS,
            limits=module.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            trust_env=False,  # no proxies from the environment for a local service
        )
        wrap_transport(transport)  # every socket operation keeps to the request's deadline
        self._client: httpx.Client = module.Client(
            base_url=self.base_url,
            # identity: a body is counted as it arrives, never inflated after the count
            headers={"Authorization": f"Bearer {api_key}", "Accept-Encoding": "identity"},
            transport=transport,
            timeout=module.Timeout(self.timeout),
            follow_redirects=False,  # the key would go to wherever a redirect points
            trust_env=False,
        )
        self._httpx = module

    def close(self) -> None:
        """Close the pooled connections (the object is unusable afterwards)."""
        self._client.close()

    def send(
        self,
        method: str,
        url_path: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | None = None,
        params: Mapping[str, str] | None = None,
        limit: int | None = ANSWER_CAP,
    ) -> httpx.Response:
        """Send one request to ``url_path`` (already percent-encoded) and read the body:
        of a 2xx answer at most ``limit`` bytes (``None``: no cap), of any other
        ``ERROR_READ_CAP`` bytes. See the module docstring for the errors."""
        httpx_errors = self._httpx
        where = f"Obsidian Local REST API at {self.base_url}"
        try:
            response = self._fetch(method, url_path, headers, content, params, limit)
        except _TooLarge as exc:
            raise EchoError(
                f"the answer of {where} to {method} {url_path} {exc}, over the {exc.cap:,} "
                f"bytes echo-memory reads of it (a note may hold at most {NOTE_CAP:,}); "
                f"nothing was taken from it{_applied(method)} - if the note really is this "
                "large, split it in Obsidian, else check that the vault URL points at the "
                "Local REST API",
                ExitCode.FAILURE,
            ) from None
        except _CloseDelimited as exc:
            raise BackendUnavailable(
                f"{where} answered {method} {url_path} with {exc}; nothing was taken from "
                "it - retry when Obsidian answers normally"
            ) from exc
        except (httpx_errors.TimeoutException, _DeadlinePassed) as exc:
            raise BackendUnavailable(
                f"{where} did not answer {method} {url_path} within {self.timeout:g} s "
                f"({type(exc).__name__}); check that Obsidian is running and responsive, "
                "or raise the `timeout` option"
            ) from exc
        except httpx_errors.ConnectError as exc:
            tls = _tls_failure(exc)
            if tls is not None:
                raise EchoError(
                    f"TLS verification of {where} failed ({tls}); "
                    + TRUST_HINT.format(base=self.base_url),
                    ExitCode.NOT_CONFIGURED,
                ) from exc
            raise BackendUnavailable(
                f"cannot connect to {where} ({exc or type(exc).__name__}); check that "
                "Obsidian is running with the Local REST API plugin enabled and that the "
                "vault URL's host and port are right"
            ) from exc
        except (httpx_errors.TransportError, httpx_errors.DecodingError, ssl.SSLError) as exc:
            raise BackendUnavailable(
                f"the connection to {where} broke during {method} {url_path} "
                f"({type(exc).__name__}: {excerpt(str(exc))}); it may or may not have been "
                "applied - check, then retry when Obsidian is reachable"
            ) from exc
        if 300 <= response.status_code < 400:
            raise self._redirected(response, where, method, url_path)
        if response.status_code in (401, 403):
            raise EchoError(
                f"{where} refused the API key ({api_error(response)}); check the API key: "
                + self.key_hint,
                ExitCode.NOT_CONFIGURED,
            )
        if response.status_code >= 500 or response.status_code in RETRY_LATER:
            raise BackendUnavailable(
                f"{where} failed on {method} {url_path} ({api_error(response)}); "
                "retry later, or check Obsidian's developer console for the error"
            )
        return response

    def _redirected(
        self, response: httpx.Response, where: str, method: str, url_path: str
    ) -> EchoError:
        """The error for a redirect: it names where it points and is never followed."""
        location = response.headers.get("location", "")
        target = excerpt(shown_url(str(response.url.join(location)))) if location else ""
        return EchoError(
            f"{where} answered {method} {url_path} with a redirect ({response.status_code}) "
            f"to {target or '(no Location given)'}; redirects are not followed, since the API "
            "key would go along - set the vault URL to the final address (obsidian+https://"
            "host:port of the Local REST API itself)",
            ExitCode.NOT_CONFIGURED,
        )

    def _fetch(
        self,
        method: str,
        url_path: str,
        headers: Mapping[str, str] | None,
        content: bytes | None,
        params: Mapping[str, str] | None,
        limit: int | None,
    ) -> httpx.Response:
        """Send and read the answer within ``timeout`` s of the start, every socket
        operation included (``deadline``; ``_DeadlinePassed`` or an httpx timeout
        otherwise): httpx's read timeout restarts with each byte, so a server trickling
        its answer would hold the caller for ever. A 2xx body over ``limit`` raises
        ``_TooLarge`` as soon as that is known (reading stops); any other answer is read
        up to ``ERROR_READ_CAP`` bytes. A body cut short of its Content-Length raises
        httpx's ``RemoteProtocolError``."""
        until = time.monotonic() + self.timeout
        request = self._client.build_request(
            method, url_path, headers=headers, content=content, params=params
        )
        with deadline(until):
            response = self._client.send(request, stream=True)
            try:
                ok = 200 <= response.status_code < 300
                cap = limit if ok else ERROR_READ_CAP
                chunks, cut = self._read_body(response, cap, until, refuse_over=ok)
            finally:
                response.close()
        if not cut and _close_delimited(response):
            raise _CloseDelimited(
                "a body ended only by closing the connection (no Content-Length), so it "
                "cannot be known to be whole"
            )
        kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-encoding"]
        whole: httpx.Response = self._httpx.Response(
            response.status_code, headers=kept, content=b"".join(chunks),
            request=request, extensions=response.extensions,
        )
        return whole

    def _read_body(
        self, response: httpx.Response, cap: int | None, until: float, *, refuse_over: bool
    ) -> tuple[list[bytes], bool]:
        """``(chunks, cut)``: the body as it arrives (decoded), at most ``cap`` bytes;
        over it, ``_TooLarge`` when ``refuse_over`` else the body cut at ``cap``."""
        declared = response.headers.get("content-length", "")
        if refuse_over and cap is not None and declared.isdigit() and int(declared) > cap:
            raise _TooLarge(f"declares {int(declared):,} bytes (Content-Length)", cap)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if cap is not None and size > cap:
                if refuse_over:
                    raise _TooLarge("grew larger while it was read", cap)
                chunks[-1] = chunk[: len(chunk) - (size - cap)]
                return chunks, True
            if time.monotonic() > until:
                raise _DeadlinePassed(f"the answer was not complete after {self.timeout:g} s")
        return chunks, False


#: Statuses meaning "not now" (request timeout, rate limited): retried later like a 5xx.
RETRY_LATER = (408, 429)


def _applied(method: str) -> str:
    """What a message says of a request whose answer was refused: a read wrote nothing."""
    return " and nothing was written" if method == "GET" else " (the request may have been applied)"


class _TooLarge(Exception):
    """A 2xx answer is larger than the request's ``cap`` (the message says how it showed)."""

    def __init__(self, how: str, cap: int) -> None:
        super().__init__(how)
        self.cap = cap


class _DeadlinePassed(Exception):
    """The answer did not arrive completely within the request's overall deadline."""


class _CloseDelimited(Exception):
    """The answer's body had no length: a cut-short body would pass for a whole one."""


def _close_delimited(response: httpx.Response) -> bool:
    """Whether the body's end was only the connection closing (HTTP/1.x, no
    Content-Length, not chunked): a cut-short body would look complete."""
    if response.status_code in (204, 304) or response.status_code < 200:
        return False
    headers = response.headers
    if "content-length" in headers:
        return False
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return False
    return response.extensions.get("http_version", b"HTTP/1.1") in (b"HTTP/1.1", b"HTTP/1.0")
