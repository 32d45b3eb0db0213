"""Reading a text argument from stdin (``-``) or a file, as strict UTF-8."""

from __future__ import annotations

import sys


def read_text_source(source: str, what: str) -> str:
    """The UTF-8 text of stdin (``source == "-"``) or of the file ``source``.

    Errors: ``EchoError`` (2) naming ``what`` (the argument, e.g. "BODY") when the file
    cannot be read or the bytes are not UTF-8.
    """
    from echo_core.errors import usage_error

    where = "stdin" if source == "-" else repr(source)
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        raise usage_error(f"{what}: cannot read {where}: {exc.strerror}; pass a readable "
                          "file or - for stdin") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise usage_error(f"{what}: {where} is not UTF-8 text (byte {exc.start}); give "
                          "UTF-8 text") from None
