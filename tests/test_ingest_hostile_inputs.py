"""``ingest`` against inputs a tester crafted: a person's line typed at the very end of
a part (under ``## Related``), a server that trickles bytes, a small PDF that unpacks
into thousands of pages, and a windows-1251 page that names its charset only in a
``<meta>`` tag."""

from __future__ import annotations

import http.server
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops import ingest_extract, ingest_plan
from echo_core.ops.ingest import ingest
from echo_core.ops.ingest_extract import extract
from echo_core.ops.ingest_fetch import FetchedSource
from tests.capture_kit import VaultBox
from tests.ingest_kit import (  # noqa: F401 - fixtures box, site
    Site,
    ingest_box,
    ingest_site,
    loopback_site,
    serving,
    site_pages,
)

REFS = "resources/references"
ARTICLE = "/articles/gear-trains.html"


def _refused(box: VaultBox, source: str, code: ExitCode, *words: str, **env: str) -> str:
    before = box.tree_digest()
    with pytest.raises(EchoError) as caught:
        ingest(box.ctx(**env), source)
    assert caught.value.code == code, caught.value.message
    for word in words:
        assert word in caught.value.message, caught.value.message
    assert box.tree_digest() == before  # nothing written
    return caught.value.message


# 1. a line typed at the end of a part lands under ``## Related``: still an edit ------

_TOPICS = ("Mainsprings", "Pendulums", "Escapements", "Dials")


def _section(topic: str) -> str:
    sentence = (f"The {topic.lower()} of a long-case clock deserve patient study, and "
                "every restorer keeps notes on what each one needed. ")
    return (f"<h2>{topic}</h2>\n<p>{sentence * 7}</p>\n<p>{sentence * 7}</p>\n")


def _page(topics: tuple[str, ...]) -> str:
    body = "".join(_section(t) for t in topics)
    return (f"<html><head><title>Clock Restoration Notes</title></head><body><article>"
            f"<h1>Clock Restoration Notes</h1>\n{body}</article></body></html>")


def test_a_line_typed_at_the_end_of_a_surplus_part_keeps_it(box: VaultBox,
                                                            tmp_path: Path) -> None:
    page = tmp_path / "restoration.html"
    page.write_text(_page(_TOPICS), encoding="utf-8")
    first = ingest(box.ctx(), str(page))
    folder = f"{REFS}/clock-restoration-notes"
    parts = [p.path for p in first.data.parts]
    assert len(parts) >= 4, parts
    typed, linked = parts[2], parts[3]  # part 03: a person's line; part 04: a tool's link
    mine = box.read(typed).rstrip("\n") + "\n- my own thought\n"
    (box.vault / typed).write_text(mine, encoding="utf-8")
    with_link = box.read(linked).rstrip("\n") + "\n- [[ada-lovelace]]\n"
    (box.vault / linked).write_text(with_link, encoding="utf-8")
    assert typed == f"{folder}/clock-restoration-notes-part-03.md"

    page.write_text(_page(_TOPICS[:1]), encoding="utf-8")  # much shorter: one section
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), str(page))
    assert env.ok and box.frontmatter(f"{REFS}/clock-restoration-notes.md")["parts"] < 3
    steps = {p.path: p.step for p in env.data.parts}
    assert steps[typed] == "kept-surplus" and typed in env.data.kept_edited
    assert box.read(typed) == mine  # byte for byte
    assert steps[linked] == "remove" and linked in env.data.removed  # a link is no edit
    assert not (box.vault / linked).exists()


# 2. a server that trickles bytes is cut off at the whole-fetch deadline ------------

class _Trickle(http.server.BaseHTTPRequestHandler):
    """Sends one byte every 0.1 s for 8 s: each read is quick, the whole never ends in
    time. ``/headers``: the bytes are a header's value; else the body's."""

    def do_GET(self) -> None:
        trickle = b"<p>" + b"a" * 80
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
            if self.path == "/headers":
                self.wfile.write(b"X-Slow: ")
                self._drip(trickle)
                self.wfile.write(b"\r\nContent-Length: 0\r\n\r\n")
            else:
                self.wfile.write(b"Content-Length: %d\r\n\r\n" % len(trickle))
                self._drip(trickle)
        except OSError:
            pass  # the client hung up

    def _drip(self, data: bytes) -> None:
        for n in range(len(data)):
            self.wfile.write(data[n:n + 1])
            time.sleep(0.1)

    def log_message(self, format: str, *args: object) -> None:
        pass


def _trickling_server() -> AbstractContextManager[str]:
    return serving(_Trickle)


@pytest.mark.parametrize("path", ["/body.html", "/headers"])
def test_a_trickling_server_is_cut_off_at_the_fetch_deadline(box: VaultBox,
                                                             path: str) -> None:
    with _trickling_server() as base:
        started = time.monotonic()
        message = _refused(box, base + path, ExitCode.UNAVAILABLE, base + path,
                           "took longer than 2 s", ECHO_INGEST_TIMEOUT="0.5")
        took = time.monotonic() - started
    assert 1.9 <= took < 4.0, (took, message)  # 4 x 0.5 s, not the server's 8 s


# 3. caps: a small file that unpacks into too much text or too many parts ----------

def _one_stream_pdf(pages: int, lines: list[str]) -> bytes:
    """A PDF of ``pages`` pages that all draw one shared content stream."""
    ops = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
    ops += [f"({line}) Tj T*" for line in lines] + ["ET"]
    stream = "\n".join(ops).encode("latin-1")
    first_page = 5
    kids = " ".join(f"{first_page + i} 0 R" for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
    objects += [page] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += (b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, xref))
    return bytes(out)


def test_a_pdf_over_the_text_cap_is_refused_before_every_page_is_read(
        box: VaultBox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypdf import PageObject

    pdf = tmp_path / "repeated.pdf"
    pdf.write_bytes(_one_stream_pdf(3000, ["The same page of text, over and over."] * 6))
    monkeypatch.setattr(ingest_extract, "MAX_CHARS", 10_000, raising=False)
    visited: list[int] = []
    real = PageObject.extract_text

    def counted(self: Any, *args: Any, **kwargs: Any) -> str:
        visited.append(1)
        return str(real(self, *args, **kwargs))

    monkeypatch.setattr(PageObject, "extract_text", counted)
    _refused(box, str(pdf), ExitCode.USAGE, "at most 10,000 characters",
             "of 3,000 pages", "nothing was ingested")
    assert 0 < len(visited) <= 60  # ~230 characters a page: stops near page 44


def test_a_page_over_the_parts_cap_is_refused(box: VaultBox, site: Site,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_plan, "MAX_PARTS", 3, raising=False)
    _refused(box, site.url(ARTICLE), ExitCode.USAGE, "would make 5 parts",
             "at most 3", "characters)")
    with pytest.raises(EchoError):  # a dry run is refused too
        ingest(box.ctx(), site.url(ARTICLE), dry_run=True)


def test_a_500_page_book_is_under_both_caps(box: VaultBox, tmp_path: Path) -> None:
    page = ("A restorer learns more from a worn pivot than from a new one, and the "
            "notebook fills with what each clock needed. ") * 24  # ~2,700 characters
    chapters = [f"## Chapter {c}\n\n" + "\n\n".join([page] * 10) for c in range(1, 51)]
    book = tmp_path / "book.md"
    book.write_text("# A Long Book\n\n" + "\n\n".join(chapters) + "\n", encoding="utf-8")
    env = ingest(box.ctx(), str(book), dry_run=True)
    assert env.ok and env.data.chars > 1_300_000 and len(env.data.parts) > 500


# 4. the charset a <meta> tag names ------------------------------------------------

_RU_TITLE = "Ремонт часов"
_RU_TEXT = ("Маятниковые часы требуют терпения: мастер чистит каждую ось, смазывает "
            "опоры и проверяет ход анкера, прежде чем собрать механизм снова. ") * 4


def _cp1251_page(meta: str) -> bytes:
    return (f"<html><head>{meta}<title>{_RU_TITLE}</title></head><body><article>"
            f"<h1>{_RU_TITLE}</h1><p>{_RU_TEXT}</p><p>{_RU_TEXT}</p></article></body>"
            "</html>").encode("cp1251")


_METAS = ['<meta charset="windows-1251">',
          '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">']


@pytest.mark.parametrize("meta", _METAS)
def test_a_meta_charset_decodes_a_local_page(box: VaultBox, tmp_path: Path,
                                             meta: str) -> None:
    page = tmp_path / "chasy.html"
    page.write_bytes(_cp1251_page(meta))
    env = ingest(box.ctx(), str(page))
    assert env.ok and env.data.title == _RU_TITLE
    assert env.data.path == f"{REFS}/ремонт-часов.md"
    part = box.read(f"{REFS}/ремонт-часов/ремонт-часов-part-01.md")
    assert "мастер чистит каждую ось" in part


def test_the_title_tag_fallback_reads_the_decoded_text(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    import trafilatura.metadata

    monkeypatch.setattr(trafilatura.metadata, "extract_metadata", lambda *a, **k: None)
    fetched = FetchedSource(str(tmp_path / "chasy.html"), False,
                            _cp1251_page(_METAS[0]).replace(f"<h1>{_RU_TITLE}</h1>"
                                                            .encode("cp1251"), b""), "html")
    assert extract(fetched).title == _RU_TITLE


@pytest.mark.parametrize(("bom", "meta", "codec", "http_charset"), [
    (b"", "utf-8", "cp1251", "windows-1251"),  # the server's charset wins
    (b"\xef\xbb\xbf", "windows-1251", "utf-8", ""),  # then a byte-order mark
    (b"", "koi8-r", "koi8_r", ""),  # then the meta tag
    (b"", "", "utf-8", ""),  # then UTF-8
])
def test_the_http_charset_then_a_bom_then_the_meta_tag_decide(
        bom: bytes, meta: str, codec: str, http_charset: str) -> None:
    head = f'<meta charset="{meta}">' if meta else ""
    page = (f"<html><head>{head}<title>{_RU_TITLE}</title></head><body><article>"
            f"<p>{_RU_TEXT}</p></article></body></html>")
    fetched = FetchedSource("/tmp/chasy.html", False, bom + page.encode(codec), "html",
                            http_charset)
    extracted = extract(fetched)
    assert extracted.title == _RU_TITLE and "мастер чистит" in extracted.markdown
