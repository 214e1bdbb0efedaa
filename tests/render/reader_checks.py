"""What a reader meets in a rendered page, counted: dead links, images without alt text,
numbers that may part from their unit at a line end, characters the PDF's font lacks.

Plain functions over an output directory (``_book``, ``_site``) or a PDF, used by the
render tests and runnable by hand: ``python tests/render/reader_checks.py _book``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = [
    "breakable_unit_spaces",
    "dead_links",
    "images_without_alt",
    "pdf_characters",
    "font_coverage",
]


class _Links(HTMLParser):
    """Every id a page defines, every href it links, every image and figure it shows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self.images: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key) and (key == "id" or tag == "a"):
                self.ids.add(a[key] or "")
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"] or "")
        if tag == "img":
            self.images.append(a)
        if tag in ("script", "style", "pre", "code", "head", "svg"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "pre", "code", "head", "svg") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def _read(path: Path) -> _Links:
    page = _Links()
    page.feed(path.read_text(encoding="utf-8", errors="replace"))
    return page


def _pages(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*.html") if "site_libs" not in p.parts)


def dead_links(out: Path) -> list[str]:
    """Links of every page under ``out`` to a local file that is missing, or to an
    ``#anchor`` its target page does not define. External (http, mailto) links are not
    followed: the check runs offline."""
    parsed: dict[Path, _Links] = {}

    def page(path: Path) -> _Links:
        if path not in parsed:
            parsed[path] = _read(path)
        return parsed[path]

    dead = []
    for path in _pages(out):
        for href in page(path).hrefs:
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("javascript:", "data:")):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if parts.path and target.is_dir():
                target = target / "index.html"
            rel = path.relative_to(out).as_posix()
            if not target.exists():
                dead.append(f"{rel}: {href} (no such file)")
                continue
            anchor = unquote(parts.fragment)
            if anchor and target.suffix == ".html" and anchor not in page(target).ids:
                dead.append(f"{rel}: {href} (no such anchor)")
    return dead


def images_without_alt(out: Path) -> list[str]:
    """Images of every page under ``out`` with no alt text (an empty alt marks decoration:
    Quarto's own icons and logos are skipped by their source path)."""
    missing = []
    for path in _pages(out):
        for img in _read(path).images:
            src = img.get("src") or ""
            if "site_libs" in src or src.startswith("data:"):
                continue
            if not (img.get("alt") or "").strip():
                missing.append(f"{path.relative_to(out).as_posix()}: {src}")
    return missing


#: Units a number is printed with (SI and binary prefixes, rates, energy, money per unit).
_UNIT = (
    r"(?:[kMGTPE]i?B(?:/s|ps)?|B/s|B|[kMGTPE]?FLOP(?:s|/s|/B|/byte)?|[kMGTPE]?b/s|Gbps|"
    r"[kMGT]?Wh?|[kMGT]?J|ms|µs|us|ns|s|min|h|d|yr|t CO|kg|g|L|°C|tokens?/s|tok/s|"
    r"samples/s|GPU-h|GPU-hours|W·h)(?![\w/])"
)
_TEX = re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]", re.S)
_BREAKABLE = re.compile(r"\d[ \t\n\r]+" + _UNIT)


def breakable_unit_spaces(out: Path) -> list[str]:
    """Places in the visible text (outside code) of every page under ``out`` where a
    number and its unit are separated by an ordinary, breakable space."""
    found = []
    for path in _pages(out):
        # TeX left for MathJax (\\( … \\)) is math, typeset as a whole
        text = _TEX.sub(" ", "".join(_read(path).text))
        for m in _BREAKABLE.finditer(text):
            where = text[max(0, m.start() - 25) : m.end() + 5]
            found.append(f"{path.relative_to(out).as_posix()}: {where!r}")
    return found


def pdf_characters(pdf: Path) -> set[str]:
    """The distinct characters of a PDF's text (pdftotext), whitespace and ASCII aside."""
    done = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True)
    return {c for c in done.stdout if ord(c) > 126 and not c.isspace()}


def font_coverage(font_file: Path) -> set[str]:
    """The characters a font file has glyphs for (``fc-query --format=%{charset}``)."""
    done = subprocess.run(
        ["fc-query", "--format=%{charset}\n", str(font_file)],
        capture_output=True,
        text=True,
        check=True,
    )
    chars: set[str] = set()
    for span in done.stdout.split("\n")[0].split():
        lo, _, hi = span.partition("-")
        for code in range(int(lo, 16), int(hi or lo, 16) + 1):
            chars.add(chr(code))
    return chars


def font_file(family: str, style: str = "Regular") -> Path | None:
    """The file fontconfig finds for a family and style, if it is installed."""
    if shutil.which("fc-match") is None:
        return None
    done = subprocess.run(
        ["fc-match", "--format=%{file}\n%{family}", f"{family}:style={style}"],
        capture_output=True,
        text=True,
    )
    file, _, found = done.stdout.partition("\n")
    return Path(file) if file and family.lower() in found.lower() else None


if __name__ == "__main__":  # pragma: no cover - a hand check
    root = Path(sys.argv[1])
    for name, fn in (
        ("dead links", dead_links),
        ("images without alt text", images_without_alt),
        ("breakable number-unit spaces", breakable_unit_spaces),
    ):
        items = fn(root)
        print(f"{name}: {len(items)}")
        for item in items[: int(sys.argv[2]) if len(sys.argv) > 2 else 5]:
            print("   ", item)
