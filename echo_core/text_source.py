"""Reading a text argument from stdin (``-``) or a file, as strict UTF-8."""

from __future__ import annotations

import sys

#: The most bytes one text source gives (a note, a body, a proposals file): what a note
#: may hold through the CLI (``patch_verbs.CLI_MAX_CONTENT`` characters) and ingest
#: downloads. Reading stops one byte past it, so an endless source (``/dev/zero``, a
#: pipe that never ends) is refused, not read into memory until it runs out.
MAX_SOURCE_BYTES = 10_000_000


def read_text_source(source: str, what: str) -> str:
    """The UTF-8 text of stdin (``source == "-"``) or of the file ``source``.

    Errors: ``EchoError`` (2) naming ``what`` (the argument, e.g. "BODY") when the file
    cannot be read, holds more than ``MAX_SOURCE_BYTES`` or the bytes are not UTF-8.
    """
    from echo_core.errors import usage_error

    where = "stdin" if source == "-" else repr(source)
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_SOURCE_BYTES + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise usage_error(f"{what}: cannot read {where}: {exc.strerror}; pass a readable "
                          "file or - for stdin") from exc
    if len(data) > MAX_SOURCE_BYTES:
        raise usage_error(f"{what}: {where} holds more than {MAX_SOURCE_BYTES:,} bytes; a note "
                          "or a file of proposals is smaller: split it (nothing was written)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise usage_error(f"{what}: {where} is not UTF-8 text (byte {exc.start}); give "
                          "UTF-8 text") from None
