"""The bearer token that guards ``/mcp``, and which bind addresses count as local.

Resolution: ``ECHO_MCP_TOKEN`` when set (origin ``env``); else the file ``mcp-token`` in
the state base dir (origin ``file``), created on first run with 32 random bytes
(URL-safe) and mode 0600 (origin ``created``). A token file readable by others is
tightened to 0600 with a warning. The token is never logged; callers print it only when
it was just created.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from echo_core.errors import EchoError, ExitCode

TOKEN_ENV = "ECHO_MCP_TOKEN"
TOKEN_FILE = "mcp-token"


@attrs.frozen(repr=False)
class BearerToken:
    """A token and where it came from (``env`` | ``file`` | ``created``); ``path`` is the
    token file (``None`` for ``env``). ``repr`` hides the secret."""

    secret: str
    origin: str
    path: Path | None = None

    def __repr__(self) -> str:
        return f"BearerToken(origin={self.origin!r}, path={str(self.path)!r})"


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _read_file(path: Path) -> str:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        with contextlib.suppress(OSError):
            os.chmod(path, 0o600)
        print(f"warning: {path} was readable by others (mode {mode:o}); set it to 600",
              file=sys.stderr)
    secret = path.read_text(encoding="utf-8").strip()
    if not secret:
        raise EchoError(f"token file {path} is empty; delete it to have a new token generated, "
                        f"or set {TOKEN_ENV}", ExitCode.NOT_CONFIGURED)
    return secret


def resolve_token(env: Mapping[str, str], state_base: str | os.PathLike[str]) -> BearerToken:
    """The token (see module docstring). Errors: 78 when the token file is empty or cannot
    be created."""
    given = env.get(TOKEN_ENV, "").strip()
    if given:
        return BearerToken(given, "env")
    path = Path(state_base).expanduser() / TOKEN_FILE
    if path.exists():
        return BearerToken(_read_file(path), "file", path)
    secret = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another server created it meanwhile
        return BearerToken(_read_file(path), "file", path)
    except OSError as exc:
        raise EchoError(f"cannot create the token file {path} ({exc.strerror}); set "
                        f"{TOKEN_ENV} or fix the state dir", ExitCode.NOT_CONFIGURED) from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secret + "\n")
    return BearerToken(secret, "created", path)
