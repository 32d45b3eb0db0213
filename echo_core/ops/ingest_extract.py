"""The text ``ingest`` keeps from what it read: a title and markdown, nothing else.

``extract(fetched)`` returns an ``ExtractedText``:

- HTML: the main text by trafilatura (navigation, headers, footers, asides and comments
  dropped), as markdown with headings, lists and tables; the title from the page's
  metadata, else its ``<title>``, else the first heading.
- PDF: each page's text by pypdf, pages separated by a blank line; the title from the
  document information, else the first line.
- markdown / text: as it is (a leading YAML frontmatter block dropped, its ``title`` kept);
  the title from the first ``# `` heading, else the file name.

HTML and text are decoded with the first of these that decodes them: the charset the
server named, a byte-order mark, (HTML only) a ``<meta charset>`` or ``<meta
http-equiv="Content-Type" content="...; charset=...">`` in the first ``META_SCAN_BYTES``,
UTF-8; else cp1252 (undecodable bytes replaced). The ``<title>`` fallback reads that same
decoded text.

The title falls back to the file name or the URL's last segment. Line ends become LF,
runs of blank lines one. Both libraries are imported here only (``pip install
'echo-memory[ingest]'``).

At most ``MAX_CHARS`` characters of text are taken: a bigger source is refused, not cut
short (as ``ECHO_INGEST_MAX_BYTES`` refuses a big download), since a reference missing its
end would read as the whole document to recall. A PDF's pages are read only until the
cap is passed, so a small file whose pages all repeat one content stream costs no more
than the cap.

Errors: ``UsageError`` (2) when the PDF cannot be read (damaged, encrypted), when the
extraction finds no text or more than ``MAX_CHARS`` characters, or when the library is
not installed (``NotConfiguredError``, 78, naming the extra).
"""

from __future__ import annotations

import codecs
import io
import re
from typing import Any

import attrs

from echo_core.errors import NotConfiguredError, UsageError
from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.ingest_fetch import FetchedSource
from echo_core.redaction import strip_private

MAX_TITLE = 150
#: The most text one ingest takes: about 700 pages of a dense book (a 500-page book is
#: 1 to 1.5 million characters), some 1,500 parts.
MAX_CHARS = 2_000_000
#: How far into an HTML file a ``<meta>`` charset is looked for.
META_SCAN_BYTES = 4096
_BLANKS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)
#: Characters a title may not hold inside a ``[[link|title]]``.
_LINK_SAFE = str.maketrans({"|": "-", "[": "(", "]": ")", "\x00": None})
_TITLE_TAG = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
#: ``<meta charset="x">`` and ``<meta http-equiv=... content="text/html; charset=x">``.
_META_CHARSET = re.compile(rb"<meta\s[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)",
                           re.IGNORECASE)
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))


@attrs.frozen
class ExtractedText:
    """The document's ``title`` (one line) and its ``markdown`` (LF, trimmed)."""

    title: str
    markdown: str
    #: ``<private>`` blocks were dropped from the raw HTML (before the parser could
    #: turn the tags into text)
    dropped_private: bool = False


def _missing(library: str) -> NotConfiguredError:
    return NotConfiguredError(f"ingest needs {library}: pip install 'echo-memory[ingest]'")


def tidy(text: str) -> str:
    """LF line ends, trailing spaces dropped, runs of blank lines made one, trimmed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANKS.sub("\n\n", text).strip()


def link_safe(text: str) -> str:
    """``text`` fit for the alias of a ``[[link|alias]]``: ``|`` made ``-``, ``[`` / ``]``
    made ``(`` / ``)`` (none left to end the link early or open another)."""
    return text.translate(_LINK_SAFE)


def one_line(title: str) -> str:
    """``title`` on one line, at most ``MAX_TITLE`` characters (cut at a word), fit for
    a link's alias (``link_safe``)."""
    clean = " ".join(link_safe(title).split()).strip(" #")
    if len(clean) > MAX_TITLE:
        clean = clean[:MAX_TITLE].rsplit(" ", 1)[0].rstrip(" ,;:-") + "…"
    return clean


def extract(fetched: FetchedSource) -> ExtractedText:
    """See the module docstring."""
    private = False
    if fetched.kind == "html":
        title, text, private = _from_html(fetched)
    elif fetched.kind == "pdf":
        title, text = _from_pdf(fetched)
    else:
        title, text = _from_text(fetched)
    text = tidy(text)
    if not text:
        raise UsageError(f"source: no text found in {fetched.location!r} (a page with no "
                         "main text, a scanned PDF or an empty file); nothing was ingested")
    if len(text) > MAX_CHARS:
        raise _too_long(fetched, f"{len(text):,} characters of text")
    title = one_line(title) or _first_heading(text) or one_line(fetched.name) or "Untitled"
    return ExtractedText(title, text, private)


def _first_heading(text: str) -> str:
    found = _HEADING.search(text)
    return one_line(found.group(1)) if found else ""


def _too_long(fetched: FetchedSource, size: str) -> UsageError:
    return UsageError(f"source: {fetched.location!r} holds {size}; one ingest takes at "
                      f"most {MAX_CHARS:,} characters; nothing was ingested (split the "
                      "document and ingest the pieces)")


def _bom_charset(data: bytes) -> str:
    return next((charset for bom, charset in _BOMS if data.startswith(bom)), "")


def _meta_charset(data: bytes) -> str:
    """The charset a ``<meta>`` tag in the first ``META_SCAN_BYTES`` of ``data`` names
    ('' when none, or one Python does not know); UTF-16/32 read as UTF-8 (a page whose
    tag is readable as ASCII is not UTF-16)."""
    found = _META_CHARSET.search(data[:META_SCAN_BYTES])
    if found is None:
        return ""
    try:
        name = codecs.lookup(found.group(1).decode("ascii")).name
    except LookupError:
        return ""
    return "utf-8" if name.startswith(("utf-16", "utf-32")) else name


def _decode(fetched: FetchedSource) -> str:
    """``fetched``'s text, decoded as the module docstring says."""
    data = fetched.data
    bom = _bom_charset(data)
    if bom == "utf-8":
        data = data[3:]
    meta = _meta_charset(data) if fetched.kind == "html" else ""
    for charset in (fetched.charset, bom, meta, "utf-8"):
        if not charset:
            continue
        try:
            return data.decode(charset)
        except (UnicodeDecodeError, LookupError):
            continue
    return data.decode("cp1252", errors="replace")


def _from_html(fetched: FetchedSource) -> tuple[str, str, bool]:
    try:
        import trafilatura
        from trafilatura.metadata import extract_metadata
    except ImportError:
        raise _missing("trafilatura") from None
    raw = _decode(fetched)
    html = strip_private(raw)  # before the parser turns the tags into text
    text = trafilatura.extract(
        html, url=fetched.location if fetched.is_url else None, output_format="markdown",
        include_comments=False, include_tables=True, include_links=False,
        include_images=False, favor_precision=True, with_metadata=False) or ""
    title = ""
    try:
        meta: Any = extract_metadata(html, extensive=False)
        title = (meta.title or "") if meta is not None else ""
    except Exception:  # noqa: BLE001 - metadata is a nicety; a page it trips on still ingests
        title = ""
    if not title:
        found = _TITLE_TAG.search(html[:65536])
        title = found.group(1) if found else ""
    return title, text, html != raw


def _from_pdf(fetched: FetchedSource) -> tuple[str, str]:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:
        raise _missing("pypdf") from None
    try:
        reader = PdfReader(io.BytesIO(fetched.data))
        if reader.is_encrypted:
            raise UsageError(f"source: {fetched.location!r} is an encrypted PDF; decrypt "
                             "it first")
        pages = _pages_under_cap(fetched, reader.pages)
        info = reader.metadata
        title = str(info.title) if info is not None and info.title else ""
    except UsageError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError,
            RecursionError) as exc:
        raise UsageError(f"source: {fetched.location!r} is not a readable PDF "
                         f"({type(exc).__name__}); nothing was ingested") from None
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    if not title:
        title = next((line for line in text.split("\n") if line.strip()), "")
    return title, text


def _pages_under_cap(fetched: FetchedSource, pages: Any) -> list[str]:
    """Each page's text, read in order until ``MAX_CHARS`` is passed (then refused)."""
    texts: list[str] = []
    size = 0
    for number, page in enumerate(pages, 1):
        text = (page.extract_text() or "").strip()
        size += len(text)
        if size > MAX_CHARS:
            raise _too_long(fetched, f"over {MAX_CHARS:,} characters of text in its first "
                                     f"{number:,} of {len(pages):,} pages")
        texts.append(text)
    return texts


def _from_text(fetched: FetchedSource) -> tuple[str, str]:
    text = _decode(fetched)
    title = ""
    if fetched.kind == "markdown" and text.lstrip("\ufeff").startswith("---"):
        fm, body, error = parse_frontmatter(text.lstrip("\ufeff"))
        if error is None:
            text = body
            title = str(fm.get("title") or "")
    return title or _first_heading(text), text
