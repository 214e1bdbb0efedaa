"""The repository speaks of mlsys, never of how the work on it was organised.

A reader of a page, a footnote, a docstring, a data note, a test or the changelog should
find what is true of mlsys and where it comes from: not which work session checked a
value, which numbered task asked for a feature, which round of work changed it, or who
owned which file. This scans every text file git tracks and, when a rendered site or
book is present (``_site/``, ``book/quarto/_book/``), the text of its HTML pages.

References to other projects' issue trackers are citations and stay: "NVIDIA/nccl-tests
issue 212", "Megatron-Bridge issue 1998", a GitHub ``/issues/`` URL. A number of three or
more digits, or one that follows a repository's name, is such a citation.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve()

# Words for the organisation of the work, never for mlsys or its subject.
_NOTES = [
    (re.compile(r"\b(?:work )?session \d+\b", re.I), "a numbered work session"),
    (
        re.compile(
            r"\b(?:this|that|last|next|previous|earlier|later|a later|one) (?:work )?session\b"
            r"(?! (?:fixture|scope|of (?:pytest|python)))",
            re.I,
        ),
        "a work session",
    ),
    (
        re.compile(
            r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|this|"
            r"last|next|previous|earlier|later|latest) (?:work )?round\b",
            re.I,
        ),
        "a round of work",
    ),
    (re.compile(r"\bround (?:one|two|three|four|five)\b", re.I), "a round of work"),
    (re.compile(r"\blead (?:engineer|developer)s?\b", re.I), "the organisation of the work"),
    (re.compile(r"\bengineers?\b(?! (?:at|of) )", re.I), "the people who did the work"),
    (re.compile(r"\bhelpers? (?:session|engineer)s?\b", re.I), "the people who did the work"),
    (re.compile(r"\b(?:OWNERS|TEAM)\.md\b|\bdocs/dev/"), "the organisation of the work"),
    (re.compile(r"(?<![\w.])/work/(?:main|shared|wt|scratch)\b"), "a path on one machine"),
    (re.compile(r"\bwho owns\b|\bowned by (?:the|an?) \w+ (?:engineer|team)", re.I), "ownership"),
]

# "issue 12", "Issue 14:", "(issue 11.5)": the project's own task numbers.
_ISSUE = re.compile(r"\bissue[ -]?#?(\d+)(?:\.\d+)?\b", re.I)
# What may stand before a citation of another project's issue: a repository or a project.
_CITED = re.compile(
    r"(?:/|\b(?:nccl|nccl-tests|megatron-bridge|megatron-lm|rocm|transformerengine|"
    r"tensorrt-llm|vllm|sglang|lmdeploy|pytorch|torch|deepspeed|quarto-cli|quarto|"
    r"jupyter|pint|pydantic|griffe|quartodoc|dexbotic|github))\W*$",
    re.I,
)


def _issue_notes(line: str) -> list[str]:
    found = []
    for match in _ISSUE.finditer(line):
        if len(match.group(1)) >= 3:
            continue  # another tracker's issue (the project's own are below 100)
        before = line[max(0, match.start() - 40) : match.start()]
        if _CITED.search(before.rstrip()):
            continue
        found.append(match.group(0))
    return found


def work_notes(text: str) -> list[tuple[int, str, str]]:
    """``(line number, matched text, why)`` for every note about the work in ``text``."""
    hits = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern, why in _NOTES:
            hits += [(number, m.group(0), why) for m in pattern.finditer(line)]
        hits += [(number, found, "a task number of the project") for found in _issue_notes(line)]
    return hits


def _tracked_text_files() -> list[Path]:
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the tracked files are unknown")
    listed = subprocess.run(
        [git, "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    files = []
    for name in filter(None, listed):
        path = ROOT / name.decode()
        if path.resolve() == THIS or not path.is_file():
            continue
        head = path.read_bytes()[:4096]
        if b"\0" not in head:  # text, not an image or a PDF
            files.append(path)
    return files


def test_the_patterns_find_work_notes_and_spare_citations():
    notes = (
        "Fidelity, second round (issue 12)\n"
        "Not re-checked in this session.\n"
        "Measured 2026-11-23 (session 3).\n"
        "Issue 14: a Result knows its inputs.\n"
        "other engineers add collectives\n"
    )
    assert [n for n, _, _ in work_notes(notes)] == [1, 1, 2, 3, 4, 5]
    citations = (
        "NVIDIA/nccl-tests issue 212; NVIDIA/nccl issue 1455; nccl issue 812\n"
        "(dexmal/dexbotic issue 41); Megatron-Bridge issue 1998\n"
        "<https://github.com/dexmal/dexbotic/issues/41>; [issue 1570](https://x/issues/1570)\n"
        "a session-scoped fixture builds the cluster once per session\n"
        "each all-gather round sends one shard\n"
    )
    assert work_notes(citations) == []


def test_no_tracked_file_carries_work_notes():
    problems = []
    for path in _tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(ROOT).as_posix()
        problems += [f"{rel}:{n}: {found!r} ({why})" for n, found, why in work_notes(text)]
    assert not problems, "notes about the work, not about mlsys:\n" + "\n".join(problems)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def _rendered_pages() -> list[Path]:
    outputs = [ROOT / "_site", ROOT / "book" / "quarto" / "_book"]
    return [p for out in outputs if out.is_dir() for p in sorted(out.rglob("*.html"))]


def test_no_rendered_page_carries_work_notes():
    pages = _rendered_pages()
    if not pages:
        pytest.skip("no rendered site or book here (quarto render writes _site/, _book/)")
    problems = []
    for page in pages:
        parser = _Text()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        rel = page.relative_to(ROOT).as_posix()
        hits = work_notes("\n".join(parser.parts))
        problems += [f"{rel}: {found!r} ({why})" for _, found, why in hits]
    assert not problems, "rendered pages with notes about the work:\n" + "\n".join(problems)
