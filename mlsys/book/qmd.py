"""Read a Quarto ``.qmd`` file the way Quarto's Jupyter engine reads it.

The parser returns what a build check needs: the YAML front matter, every executable
code cell (language, ``#|`` options, the line of the .qmd where its code starts) and every
inline expression (`` `{python} expr` ``) with its line and column in the .qmd.

It mirrors the rules of Quarto's own converter (``quartoMdToJupyter`` in quarto-cli)
rather than CommonMark, because what matters is what Quarto will *execute*:

- A cell opens on a line ``^\\s*```+\\s*{lang ...}\\s*$`` (backticks only, three or more)
  and closes on a line of exactly as many backticks at the same indent. Longer fences
  let a cell's code contain a line of three backticks.
- ```` ```{.python} ````, ```` ```python ```` and ```` ```{{python}} ```` are displayed,
  never executed.
- An executable cell header *inside* a plain fenced block is still executed by Quarto
  (its docs say to write ```` ```{{python}} ```` to show one literally): the parser
  keeps such a cell and marks it ``nested`` so the check can warn about it.
- An inline expression is `` `{python} expr` `` not preceded by a backtick
  (the regex Quarto uses, ``(^|[^`])`{python}[ \\t]([^`]+)` ``). Quarto evaluates
  them even inside fenced code blocks, so the parser does too; it skips them inside
  executable cells and the front matter, where Quarto never looks.

Examples
--------
>>> doc = parse_qmd("```{python}\\n#| echo: false\\nx = 1\\n```\\nx is `{python} x`.\\n")
>>> doc.cells[0].code_line, doc.cells[0].options["echo"], doc.inlines[0].col
(2, False, 16)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CodeCell",
    "InlineExpr",
    "Include",
    "QmdDocument",
    "IncludeError",
    "parse_qmd",
    "read_qmd",
    "iter_steps",
    "inline_pattern",
]

# Quarto's own regexes (quarto-cli: src/core/jupyter/jupyter.ts, src/core/execute-inline.ts).
_CELL_START = re.compile(r"^(\s*)(`{3,})\s*\{([=A-Za-z][=A-Za-z0-9_]*)( *[ ,].*)?\}\s*$")
_FENCE_START = re.compile(r"^(\s*)(`{3,}|~{3,})")
_YAML_DELIM = re.compile(r"^---\s*$")
_OPTION_LINE = re.compile(r"^#\|\s?(.*)$")
_INCLUDE = re.compile(r"""^\s*\{\{<\s*include\s+(["']?)(.+?)\1\s*>\}\}\s*$""")


def inline_pattern(language: str = "python") -> re.Pattern[str]:
    """The regex Quarto uses to find inline expressions of one language.

    Parameters
    ----------
    language : str
        Engine language, e.g. ``"python"``.

    Returns
    -------
    re.Pattern
        Group 1 is the character before the opening backtick (or empty at line start),
        group 2 the expression (not yet stripped).
    """
    return re.compile(r"(^|[^`])`\{" + re.escape(language) + r"\}[ \t]([^`]+)`")


_INLINE_PY = inline_pattern("python")


@dataclass
class CodeCell:
    """One executable code cell.

    Attributes
    ----------
    language : str
        The engine language in the header (``python``, ``ojs``, ``r`` ...).
    header_line : int
        1-based .qmd line of the opening fence.
    code_line : int
        1-based .qmd line of the first line of ``source`` (the line after the fence).
    source : str
        Everything between the fences, ``#|`` option lines included, so that line ``k``
        (0-based) of ``source`` is .qmd line ``code_line + k``.
    options : dict
        The ``#|`` options parsed as YAML (empty when there are none).
    option_lines : int
        How many leading lines are ``#|`` options (Quarto strips them before running).
    options_error : str or None
        Why the options could not be parsed, if they could not.
    nested : bool
        The header sits inside a plain fenced block (Quarto still executes it).
    indent : int
        Columns of indentation stripped from every line (cells inside list items).
    """

    language: str
    header_line: int
    code_line: int
    source: str
    options: dict[str, Any] = field(default_factory=dict)
    option_lines: int = 0
    options_error: str | None = None
    nested: bool = False
    indent: int = 0

    @property
    def code(self) -> str:
        """The code Quarto sends to the kernel: ``source`` without the option lines."""
        return "\n".join(self.source.split("\n")[self.option_lines :])

    @property
    def evaluated(self) -> bool:
        """Whether Quarto runs the cell (``#| eval: false`` cells are only shown)."""
        return self.options.get("eval", True) is not False


@dataclass
class InlineExpr:
    """One inline expression `` `{python} expr` ``.

    Attributes
    ----------
    expression : str
        The expression, stripped (Quarto strips it too).
    line : int
        1-based .qmd line.
    col : int
        1-based column of the expression's first character.
    after_cell : int
        Index in ``QmdDocument.cells`` of the last cell before the expression
        (``-1`` when no cell precedes it): Quarto evaluates inline expressions when it
        reaches them, after the cells above and before the cells below.
    """

    expression: str
    line: int
    col: int
    after_cell: int = -1


@dataclass
class Include:
    """One ``{{< include file >}}`` shortcode on a line of its own.

    Attributes
    ----------
    target : str
        The path as written (relative to the including file; a leading ``/`` means
        the project root).
    line : int
        1-based .qmd line of the shortcode.
    after_cell : int
        Index of the last cell before it (``-1`` when none).
    """

    target: str
    line: int
    after_cell: int = -1


@dataclass
class QmdDocument:
    """A parsed .qmd file.

    Attributes
    ----------
    path : Path or None
        Where the text came from.
    front_matter : dict
        The YAML front matter (empty when there is none).
    front_matter_error : str or None
        Why the front matter could not be parsed, if it could not.
    cells : list of CodeCell
        Every executable cell, any language, in document order.
    inlines : list of InlineExpr
        Every inline ``{python}`` expression, in document order.
    includes : list of Include
        Every ``{{< include >}}`` shortcode outside code, in document order.
    """

    path: Path | None
    front_matter: dict[str, Any] = field(default_factory=dict)
    front_matter_error: str | None = None
    cells: list[CodeCell] = field(default_factory=list)
    inlines: list[InlineExpr] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)

    @property
    def python_cells(self) -> list[CodeCell]:
        """The ``{python}`` cells."""
        return [c for c in self.cells if c.language == "python"]

    @property
    def eval_default(self) -> bool:
        """The document-level ``execute: eval`` option (default ``True``)."""
        execute = self.front_matter.get("execute")
        return not (isinstance(execute, dict) and execute.get("eval") is False)

    def runs(self, cell: CodeCell) -> bool:
        """Whether Quarto executes ``cell`` (a python cell whose ``eval`` is true).

        A document with ``engine: markdown`` executes nothing.
        """
        if cell.language != "python" or self.front_matter.get("engine") == "markdown":
            return False
        return cell.options.get("eval", self.eval_default) is not False


def _load_yaml(text: str) -> tuple[Any, str | None]:
    try:
        import yaml
    except ImportError:  # pragma: no cover - pyyaml is in the [book] extra
        return _tiny_yaml(text), None
    try:
        # libyaml's loader when pyyaml was built with it: ten times faster on options.
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), None
    except yaml.YAMLError as exc:
        return None, " ".join(str(exc).split())


def _tiny_yaml(text: str) -> dict[str, Any]:
    """``key: value`` lines, for the rare install without pyyaml."""
    out: dict[str, Any] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith(" "):
            v = value.strip()
            out[key.strip()] = {"true": True, "false": False}.get(v.lower(), v)
    return out


def _parse_options(lines: list[str]) -> tuple[dict[str, Any], int, str | None]:
    option_text: list[str] = []
    for line in lines:
        m = _OPTION_LINE.match(line)
        if not m:
            break
        option_text.append(m.group(1))
    if not option_text:
        return {}, 0, None
    value, error = _load_yaml("\n".join(option_text))
    if error is None and value is not None and not isinstance(value, dict):
        error = f"cell options must be 'key: value' lines, got {value!r}"
    return (value if isinstance(value, dict) else {}), len(option_text), error


def _scan_inline(line: str, lineno: int, after_cell: int, out: list[InlineExpr]) -> None:
    for m in _INLINE_PY.finditer(line):
        raw = m.group(2)
        start = m.start(2)
        lead = len(raw) - len(raw.lstrip())
        out.append(InlineExpr(raw.strip(), lineno, start + lead + 1, after_cell))


def parse_qmd(text: str, path: str | Path | None = None) -> QmdDocument:
    """Parse the text of a .qmd file.

    Parameters
    ----------
    text : str
        The file's content.
    path : str or Path, optional
        Recorded on the result, for messages.

    Returns
    -------
    QmdDocument
    """
    doc = QmdDocument(Path(path) if path is not None else None)
    lines = text.splitlines()
    i = 0
    # Front matter: Quarto reads the YAML block that opens the file.
    if lines and _YAML_DELIM.match(lines[0]):
        for j in range(1, len(lines)):
            if _YAML_DELIM.match(lines[j]) or lines[j].rstrip() == "...":
                value, error = _load_yaml("\n".join(lines[1:j]))
                if isinstance(value, dict):
                    doc.front_matter = value
                elif error is None and value is not None:
                    error = "front matter is not a mapping"
                doc.front_matter_error = error
                i = j + 1
                break

    plain_fence: tuple[str, str] | None = None  # (indent, fence) of an open plain block
    while i < len(lines):
        line = lines[i]
        m = _CELL_START.match(line)
        if m and not m.group(3).startswith("="):
            indent, ticks, language = m.group(1), m.group(2), m.group(3).lower()
            close = re.compile("^" + re.escape(indent) + "`{" + str(len(ticks)) + r"}\s*$")
            body: list[str] = []
            j = i + 1
            while j < len(lines) and not close.match(lines[j]):
                body.append(lines[j][len(indent) :] if lines[j].startswith(indent) else lines[j])
                j += 1
            options, n_opts, error = _parse_options(body) if body else ({}, 0, None)
            doc.cells.append(
                CodeCell(
                    language=language,
                    header_line=i + 1,
                    code_line=i + 2,
                    source="\n".join(body),
                    options=options,
                    option_lines=n_opts,
                    options_error=error,
                    nested=plain_fence is not None,
                    indent=len(indent),
                )
            )
            i = j + 1
            continue
        fence = _FENCE_START.match(line)
        if fence:
            if plain_fence is None:
                plain_fence = (fence.group(1), fence.group(2))
            else:
                # CommonMark: a closing fence has the same character, at least as many
                # of them, and nothing else on the line.
                char, size = plain_fence[1][0], len(plain_fence[1])
                stripped = line.strip()
                if stripped and set(stripped) == {char} and len(stripped) >= size:
                    plain_fence = None
        include = _INCLUDE.match(line) if plain_fence is None and not fence else None
        if include:
            doc.includes.append(Include(include.group(2), i + 1, len(doc.cells) - 1))
        _scan_inline(line, i + 1, len(doc.cells) - 1, doc.inlines)
        i += 1
    return doc


def read_qmd(path: str | Path) -> QmdDocument:
    """Read and parse a .qmd file (UTF-8).

    Parameters
    ----------
    path : str or Path
        The file.

    Returns
    -------
    QmdDocument
    """
    p = Path(path)
    return parse_qmd(p.read_text(encoding="utf-8"), p)


class IncludeError(Exception):
    """An ``{{< include >}}`` names a file that cannot be read (Quarto fails too).

    Parameters
    ----------
    doc : QmdDocument
        The including document.
    include : Include
        The shortcode.
    reason : str
        Why.
    """

    def __init__(self, doc: QmdDocument, include: Include, reason: str) -> None:
        self.doc = doc
        self.include = include
        super().__init__(f"include {include.target!r}: {reason}")


def _project_root(start: Path) -> Path:
    for d in [start, *start.parents]:
        if (d / "_quarto.yml").is_file() or (d / "_quarto.yaml").is_file():
            return d
    return start


def iter_steps(
    doc: QmdDocument, _seen: tuple[Path, ...] = ()
) -> Iterator[tuple[QmdDocument, CodeCell | InlineExpr]]:
    """Cells and inline expressions in the order Quarto meets them, includes expanded.

    Quarto splices ``{{< include >}}`` files into the page before it executes anything,
    so an included file's cells run where the shortcode stands, in the including
    chapter's kernel.

    Parameters
    ----------
    doc : QmdDocument
        A document read from a file (includes are resolved against its directory).

    Returns
    -------
    Iterator of (QmdDocument, CodeCell or InlineExpr)
        A generator of the document that holds each item (the chapter or an included
        file), and the item.

    Raises
    ------
    IncludeError
        An included file is missing, unreadable, or includes itself.
    """
    items: list[tuple[int, int, Any]] = [(c.header_line, 0, c) for c in doc.cells]
    items += [(e.line, e.col, e) for e in doc.inlines]
    items += [(inc.line, 0, inc) for inc in doc.includes]
    here = doc.path.resolve() if doc.path else None
    for _, _, item in sorted(items, key=lambda t: (t[0], t[1])):
        if not isinstance(item, Include):
            yield doc, item
            continue
        base = here.parent if here else Path(".")
        target = (
            _project_root(base) / item.target.lstrip("/")
            if item.target.startswith("/")
            else base / item.target
        )
        if target.resolve() in _seen or target.resolve() == here:
            raise IncludeError(doc, item, "the file includes itself")
        try:
            child = read_qmd(target)
        except (OSError, UnicodeDecodeError) as exc:
            raise IncludeError(doc, item, f"cannot read {target}: {exc}") from exc
        yield from iter_steps(child, (*_seen, *([here] if here else [])))
