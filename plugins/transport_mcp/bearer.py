"""The bearer token that guards ``/mcp``, and which bind addresses count as local.

Resolution: ``ECHO_MCP_TOKEN`` when set (origin ``env``); else the file ``mcp-token`` in
the state base dir (origin ``file``), created on first run with 32 random bytes
(URL-safe) and mode 0600 (origin ``created``). The file is opened without following a
symlink and must be a regular file owned by this user, else ``EchoError`` 78: a symlink
planted there must not be read, nor its target's mode changed. A token file readable by
others is tightened to 0600 (through the open descriptor) with a warning. The token is
never logged or printed: callers name the file it is kept in. A token from the
environment shorter than ``MIN_TOKEN_CHARS`` is used, with a warning on stderr.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import socket
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from echo_core import EchoError, ExitCode

TOKEN_ENV = "ECHO_MCP_TOKEN"
TOKEN_FILE = "mcp-token"
#: A token from the environment shorter than this gets a warning (the generated one has 43).
MIN_TOKEN_CHARS = 16
#: A token file longer than this is not a token file (it is not read whole).
MAX_TOKEN_BYTES = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted there must not hang start-up


@attrs.frozen(repr=False)
class BearerToken:
    """A token and where it came from (``env`` | ``file`` | ``created``); ``path`` is the
    token file (``None`` for ``env``). ``repr`` hides the secret."""

    secret: str
    origin: str
    path: Path | None = None

    def __repr__(self) -> str:
        return f"BearerToken(origin={self.origin!r}, path={str(self.path)!r})"


def bind_addresses(host: str) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses a bind to ``host`` may use, resolved as the OS does (so ``127.1`` is
    127.0.0.1 and ``localhost`` is whatever it resolves to); empty when it does not
    resolve. IPv4-mapped IPv6 addresses count as their IPv4 address."""
    name = host.strip().strip("[]")
    try:
        infos = socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return set()
    found: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
            address = address.ipv4_mapped
        found.add(address)
    return found


def is_loopback(host: str) -> bool:
    """True when ``host`` resolves only to loopback addresses (127.0.0.0/8, ::1):
    ``127.0.0.1``, ``127.1``, ``127.0.0.2``, ``::1``, ``localhost``; False for a
    wildcard, any other address, or a name that does not resolve."""
    addresses = bind_addresses(host)
    return bool(addresses) and all(address.is_loopback for address in addresses)


def _refuse(path: Path, what: str) -> EchoError:
    return EchoError(f"the token file {path} {what}; refusing to use it. Delete it (a new "
                     f"token is generated on the next start) or set {TOKEN_ENV}",
                     ExitCode.NOT_CONFIGURED)


def _read_file(path: Path) -> str:
    """The token kept in ``path`` (an existing file); ``FileNotFoundError`` when absent."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP or path.is_symlink():
            raise _refuse(path, "is a symbolic link") from None
        raise EchoError(f"cannot read the token file {path} ({exc.strerror}); fix its "
                        f"permissions, delete it, or set {TOKEN_ENV}",
                        ExitCode.NOT_CONFIGURED) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse(path, "is not a regular file")
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            raise _refuse(path, f"belongs to another user (uid {info.st_uid})")
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            os.fchmod(fd, 0o600)
            print(f"warning: {path} was readable by others (mode {mode:o}); set it to 600",
                  file=sys.stderr)
        raw = os.read(fd, MAX_TOKEN_BYTES + 1)
    finally:
        os.close(fd)
    secret = raw.decode("utf-8", errors="replace").strip()
    if len(raw) > MAX_TOKEN_BYTES:
        raise _refuse(path, f"is over {MAX_TOKEN_BYTES} bytes (not a token)")
    if not secret:
        raise EchoError(f"token file {path} is empty; delete it to have a new token generated, "
                        f"or set {TOKEN_ENV}", ExitCode.NOT_CONFIGURED)
    return secret


def _create_file(path: Path) -> str:
    """A new token written to ``path`` (mode 0600; never through an existing file or
    link); ``FileExistsError`` when something is already there."""
    secret = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except FileExistsError:
        raise
    except OSError as exc:
        raise EchoError(f"cannot create the token file {path} ({exc.strerror}); set "
                        f"{TOKEN_ENV} or fix the state dir", ExitCode.NOT_CONFIGURED) from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    return secret


def resolve_token(env: Mapping[str, str], state_base: str | os.PathLike[str]) -> BearerToken:
    """The token (see module docstring). Errors: 78 when the token file is empty, a
    symlink, not a regular file, another user's, or cannot be read or created."""
    given = env.get(TOKEN_ENV, "").strip()
    if given:
        if len(given) < MIN_TOKEN_CHARS:
            print(f"warning: {TOKEN_ENV} is {len(given)} characters; a bearer token that "
                  f"short can be guessed: use {MIN_TOKEN_CHARS} random characters or more "
                  "(python3 -c 'import secrets; print(secrets.token_urlsafe(32))'), or unset "
                  "it to use the generated token file", file=sys.stderr)
        return BearerToken(given, "env")
    path = Path(state_base).expanduser() / TOKEN_FILE
    try:
        return BearerToken(_read_file(path), "file", path)
    except FileNotFoundError:
        pass
    try:
        return BearerToken(_create_file(path), "created", path)
    except FileExistsError:  # another server created it meanwhile (or a link appeared)
        return BearerToken(_read_file(path), "file", path)
