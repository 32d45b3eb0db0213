"""Helpers for the ingest tests: a loopback HTTP site serving fixtures, a tiny PDF writer,
and the fixture texts.

Not a test module (no ``test_`` prefix). The site listens on 127.0.0.1 only (port 0: the
system picks a free one) in a daemon thread; nothing leaves the machine.
"""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs
import pytest

from tests.capture_kit import VaultBox

DATA = Path(__file__).parent / "data" / "ingest"
ARTICLE = (DATA / "article.html").read_bytes()
GUIDE = (DATA / "guide.md").read_bytes()
#: Text of the article's navigation, cookie banner, aside and footer: never ingested.
BOILERPLATE = ("Shop the gearbox sale", "Sign in to your account", "cookie preferences",
               "Ten funniest cat videos", "Subscribe to our newsletter",
               "All rights reserved", "window.analytics")
#: A phrase only in the article's helical-gear paragraph (its third part).
PART3_PHRASE = "helical pinion whine"


@attrs.define
class Page:
    """What the site answers for one path: status, headers and body; ``delay`` seconds
    before answering."""

    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    location: str = ""
    delay: float = 0.0


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, Page]
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        page = self.pages.get(self.path, Page(b"not here", "text/plain", 404))
        if page.delay:
            time.sleep(page.delay)
        try:
            self.send_response(page.status)
            if page.location:
                self.send_header("Location", page.location)
            self.send_header("Content-Type", page.content_type)
            self.send_header("Content-Length", str(len(page.body)))
            self.end_headers()
            self.wfile.write(page.body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@attrs.frozen
class Site:
    """A running loopback site: ``url(path)``, ``pages`` to change what it serves, and
    ``hits`` (the paths requested, in order)."""

    base: str
    pages: dict[str, Page]
    hits: list[str]

    def url(self, path: str) -> str:
        return self.base + path


@contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port, a thread per request) until the block
    ends; yields the base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def loopback_site(pages: dict[str, Page]) -> Iterator[Site]:
    """Serve ``pages`` on 127.0.0.1 until the block ends."""
    hits: list[str] = []
    handler = type("Handler", (_Handler,), {"pages": pages, "hits": hits})
    with serving(handler) as base:
        yield Site(base, pages, hits)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pdf_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], title: str = "") -> bytes:
    """A small real PDF: one page per list of lines, Helvetica 11pt, an Info title."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                   b"/Encoding /WinAnsiEncoding >>")
    for n, lines in enumerate(pages):
        ops = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
        for line in lines:
            ops += [f"({_pdf_string(line)}) Tj", "T*"]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
                       f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_ids[n] + 1} 0 R >>"
                       .encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_id = len(objects) + 1
    objects.append(f"<< /Title ({_pdf_string(title)}) >>".encode("latin-1"))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {info_id} 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


#: The PDF fixture: two pages about clock escapements.
PDF_PAGES = [
    ["Clock Escapements", "",
     "An escapement releases the energy of a clock's spring or weight in small steps.",
     "The anchor escapement made pendulum clocks accurate to a minute a day."],
    ["The deadbeat escapement removes the recoil of the anchor design.",
     "Watchmakers prefer the lever escapement for its robustness."],
]
PDF = make_pdf(PDF_PAGES, title="Clock Escapements")


def article_v2() -> bytes:
    """The article after an edit: a sentence changed and its last two sections cut."""
    text = ARTICLE.decode()
    text = text.replace("three to one", "four to one")
    cut_from = text.index("<h2>Backlash and lubrication</h2>")
    cut_to = text.index("</article>")
    return (text[:cut_from] + text[cut_to:]).encode()


def site_pages() -> dict[str, Page]:
    """The fixtures: an article with navigation noise, a PDF and a markdown file."""
    return {
        "/articles/gear-trains.html": Page(ARTICLE),
        "/papers/escapements.pdf": Page(PDF, "application/pdf"),
        "/docs/guide.md": Page(GUIDE, "text/markdown; charset=utf-8"),
    }


@pytest.fixture(name="box")
def ingest_box(tmp_path: Path) -> VaultBox:
    """Fixture ``box``: a new vault. A module takes it (and ``site``) with ``from
    tests.ingest_kit import ingest_box, ingest_site``."""
    return VaultBox(tmp_path).init()


@pytest.fixture(name="site")
def ingest_site() -> Iterator[Site]:
    """Fixture ``site``: the loopback server of ``site_pages``, stopped after the test."""
    with loopback_site(site_pages()) as running:
        yield running


# -- hand edits and deletions (tests/test_ingest_hand_*.py) ------------------------------

REFS = "resources/references"


def guide(title: str, topics: list[str], intro: str = "What this guide covers.") -> str:
    """A markdown source: ``# title``, ``intro``, then one ``## topic`` section per topic,
    each long enough (over ``ingest_chunks.MIN_AT_HEADING``) to be a part of its own."""
    sections = "".join(
        f"## {topic}\n\n" + f"The {topic.lower()} step is done with care and checked twice. "
        * 12 + "\n\n" for topic in topics)
    return f"# {title}\n\n{intro}\n\n{sections}"


def vault_files(box: VaultBox) -> dict[str, bytes]:
    """Every note of the vault (the indexes left out): path -> bytes."""
    return {p.relative_to(box.vault).as_posix(): p.read_bytes()
            for p in sorted(box.vault.rglob("*.md")) if "_agent/index" not in p.as_posix()}


def changed_notes(before: dict[str, bytes], after: dict[str, bytes]) -> set[str]:
    """The notes written, created or deleted between two ``vault_files`` snapshots, the
    daily note (the agent log line) left out."""
    return {p for p in before.keys() | after.keys()
            if before.get(p) != after.get(p) and not p.startswith("journal/")}


def notes_of_source(box: VaultBox, location: str) -> list[str]:
    """The notes under ``resources/references/`` whose ``source_path`` is ``location``."""
    from echo_core.frontmatter import parse_frontmatter

    found = []
    for path, data in vault_files(box).items():
        if path.startswith(REFS + "/"):
            fm, _, _ = parse_frontmatter(data.decode("utf-8"))
            if fm.get("source_path") == location:
                found.append(path)
    return sorted(found)
