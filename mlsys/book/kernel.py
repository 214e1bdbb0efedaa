"""Run a chapter in a Jupyter kernel the way Quarto's Jupyter engine runs it.

Quarto (``src/resources/jupyter/notebook.py`` in quarto-cli) turns a .qmd into a
notebook and walks its cells in order: a code cell is executed with its ``#|`` option
lines stripped; a markdown cell's inline expressions are sent to the kernel as
``user_expressions`` of an empty ``execute_request``, *when that markdown cell is
reached* — after the cells above it and before the cells below. The value Quarto writes
into the page is the expression's display data: ``text/markdown`` when the object has
``_repr_markdown_``, else ``text/plain`` (its ``repr``), with the quotes of a string
repr removed. This module does the same, so what it records is what the book prints.

The kernel is ipykernel started with the interpreter running this code
(``sys.executable``), whatever kernelspec named ``python3`` is installed elsewhere.
The working directory is the chapter's directory (Quarto's default ``execute-dir``).
One kernel serves several chapters, each in a fresh namespace (see
:func:`execute_documents`), because starting a kernel costs more than most chapters.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsys.book.findings import Finding
from mlsys.book.findings import display_path as _display_path
from mlsys.book.qmd import CodeCell, IncludeError, InlineExpr, QmdDocument, iter_steps, read_qmd

__all__ = [
    "InlineValue",
    "ExecutionResult",
    "execute_document",
    "execute_documents",
    "rendered_text",
    "bad_output",
]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_FRAME = re.compile(r"Cell In\s*\[(\d+)\],\s*line (\d+)")
_WARNING_LINE = re.compile(r"\b\w*Warning: .*")
_FILE_FRAME = re.compile(r'File "?([^",\n]+?)"?(?::(\d+)|, line (\d+)), in ([^\s(]+)')

# Output that must never reach a reader: (pattern, what it means).
_BAD_OUTPUT: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<![\w.])[+-]?nan(?!\w)", re.IGNORECASE), "shows NaN"),
    (re.compile(r"(?<![\w.])[+-]?inf(?:inity)?(?!\w)", re.IGNORECASE), "shows infinity"),
    (re.compile(r"<Quantity\("), "shows a raw pint repr (<Quantity(...)>): format it"),
    (re.compile(r"\bnp\.(?:float|int)\d*\("), "shows a raw numpy repr: convert or format it"),
    (re.compile(r"Traceback \(most recent call last\)"), "shows a traceback"),
]


@dataclass(frozen=True)
class InlineValue:
    """What one inline expression put into the page.

    Attributes
    ----------
    file : str
        The .qmd that holds the expression (the chapter, or a file it includes).
    line, col : int
        1-based position of the expression in that file.
    expression : str
        The expression.
    text : str
        The rendered text (``text/markdown``, else ``text/plain`` with a string's
        quotes removed).
    mime : str
        The MIME type the text came from.
    """

    file: str
    line: int
    col: int
    expression: str
    text: str
    mime: str


@dataclass
class ExecutionResult:
    """The outcome of running one chapter.

    Attributes
    ----------
    path : Path
        The chapter.
    display : str
        The path as shown in findings.
    findings : list of Finding
        Errors and warnings from execution.
    inline_values : list of InlineValue
        Every inline value evaluated, in document order.
    completed : bool
        Every cell and expression ran (no error stopped the chapter).
    """

    path: Path
    display: str
    findings: list[Finding] = field(default_factory=list)
    inline_values: list[InlineValue] = field(default_factory=list)
    completed: bool = True


def rendered_text(data: dict[str, Any]) -> tuple[str, str]:
    """The text Quarto inserts for a display-data bundle, and its MIME type.

    Parameters
    ----------
    data : dict
        MIME type -> content, as in a Jupyter ``display_data`` message.

    Returns
    -------
    (str, str)
        Text and MIME type (``("", "")`` for an empty bundle).

    Examples
    --------
    >>> rendered_text({"text/plain": "'3.35 TB/s'"})
    ('3.35 TB/s', 'text/plain')
    >>> rendered_text({"text/plain": "<X>", "text/markdown": "**x**"})
    ('**x**', 'text/markdown')
    """
    for mime in ("text/markdown", "text/plain"):
        if mime in data:
            value = data[mime]
            text = "".join(value) if isinstance(value, list) else str(value)
            if mime == "text/plain" and len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
                text = text[1:-1]  # Quarto's asEscapedMarkdown drops a string repr's quotes
            return text, mime
    return "", ""


def bad_output(text: str) -> str | None:
    """Why ``text`` must not be published, or ``None`` when it is fine.

    Parameters
    ----------
    text : str
        Output or an inline value as rendered.

    Returns
    -------
    str or None

    Examples
    --------
    >>> bad_output("3.35 TB/s") is None
    True
    >>> bad_output("nan TB/s")
    'shows NaN'
    """
    if any(line.strip() == "None" for line in text.splitlines()):
        return "shows None"
    for pattern, why in _BAD_OUTPUT:
        if pattern.search(text):
            return why
    return None


def _kernel_manager_class() -> type:
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    class _CurrentPythonSpecs(KernelSpecManager):
        """Always the interpreter running the check, so the chapter sees this mlsys."""

        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(
                argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="Python 3 (mlsys check)",
                language="python",
                resource_dir="",
            )

    class _Manager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            kwargs.setdefault("kernel_spec_manager", _CurrentPythonSpecs())
            if os.name == "posix":
                kwargs.update(_ipc_endpoint(self))
            super().__init__(**kwargs)

    return _Manager


def _ipc_endpoint(owner: object) -> dict[str, str]:
    """Kernel sockets as Unix-domain sockets in a private folder of their own (removed
    with ``owner``), not TCP ports on loopback.

    jupyter_client picks free TCP ports by binding and releasing them before the kernel
    binds them, so kernels starting together (the processes of a parallel test run, or
    several builds on one machine) can pick the same port; the loser fails with "Address
    already in use" and its client waits out its startup timeout (jupyter/jupyter_client
    issue 487). A socket path no other process can choose has no such race. The kernel
    would otherwise put ``ipc`` sockets in the chapter's folder.
    """
    import shutil
    import tempfile
    import weakref

    folder = tempfile.mkdtemp(prefix="mlsys-kernel-")  # mode 0700
    weakref.finalize(owner, shutil.rmtree, folder, True)
    return {"transport": "ipc", "ip": os.path.join(folder, "kernel")}


def _kernel_env(path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("MPLBACKEND", "Agg")  # no display in a build
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"  # silence the debugger's frozen-modules note
    env["QUARTO_DOCUMENT_PATH"] = str(path.parent)
    env["QUARTO_DOCUMENT_FILE"] = path.name
    return env


def _traceback_text(output: dict[str, Any]) -> str:
    return _ANSI.sub("", "\n".join(output.get("traceback") or []))


class _Run:
    """One chapter's execution state."""

    def __init__(self, doc: QmdDocument, display: str, timeout: float) -> None:
        self.doc = doc
        self.display = display
        self.timeout = timeout
        self.result = ExecutionResult(doc.path or Path(display), display)
        self.by_count: dict[int, tuple[CodeCell, str]] = {}
        self.where = display  # the file holding the current item (a chapter or an include)

    def add(self, line: int, col: int, severity: str, code: str, message: str) -> None:
        self.result.findings.append(Finding(self.where, line, col, severity, code, message))

    # -- errors --------------------------------------------------------------------------
    def _where(self, cell: CodeCell, count: int | None, tb: str) -> tuple[int, str]:
        """The .qmd line of the failing statement and a note on the innermost frame."""
        line = cell.code_line + cell.option_lines
        here = [m for m in _CELL_FRAME.finditer(tb) if count and int(m.group(1)) == count]
        if here:
            line = cell.code_line + cell.option_lines + int(here[0].group(2)) - 1
        frames: list[tuple[int, str]] = []
        for m in _CELL_FRAME.finditer(tb):
            if int(m.group(1)) in self.by_count:
                owner, owner_file = self.by_count[int(m.group(1))]
                qline = owner.code_line + owner.option_lines + int(m.group(2)) - 1
                frames.append((m.start(), f"{owner_file}:{qline}"))
        for m in _FILE_FRAME.finditer(tb):
            frames.append((m.start(), f"{m.group(1)}:{m.group(2) or m.group(3)} in {m.group(4)}"))
        last = max(frames)[1] if frames else ""
        return line, last

    def cell_failed(self, cell: CodeCell, count: int | None, output: dict[str, Any]) -> None:
        tb = _traceback_text(output)
        line, last = self._where(cell, count, tb)
        message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")
        if last:
            message += f" (last frame: {last})"
        self.add(line, 1, "error", "cell-error", f"cell raised {message}")

    # -- outputs -------------------------------------------------------------------------
    def check_outputs(self, cell: CodeCell, outputs: list[dict[str, Any]]) -> None:
        opts = cell.options
        shown = opts.get("output", True) is not False and opts.get("include", True) is not False
        if not shown:
            return
        for out in outputs:
            kind = out.get("output_type")
            if kind == "stream":
                text = out.get("text", "")
                text = "".join(text) if isinstance(text, list) else text
                if out.get("name") == "stderr" and opts.get("warning", True) is not False:
                    warned = _WARNING_LINE.search(text)
                    if warned:
                        self.add(
                            cell.header_line,
                            1,
                            "warning",
                            "cell-warning",
                            f"cell prints a warning into the page: {warned.group(0).strip()}",
                        )
                    continue
            elif kind in ("execute_result", "display_data"):
                text, _ = rendered_text(out.get("data", {}))
            else:
                continue
            why = bad_output(text)
            if why:
                excerpt = " ".join(text.split())[:80]
                self.add(
                    cell.header_line, 1, "error", "bad-output", f"cell output {why}: {excerpt!r}"
                )

    def record_inline(self, expr: InlineExpr, result: dict[str, Any]) -> None:
        if result.get("status") != "ok":
            message = f"{result.get('ename', 'Error')}: {result.get('evalue', '')}".rstrip(": ")
            self.add(
                expr.line,
                expr.col,
                "error",
                "inline-error",
                f"`{expr.expression}` raised {message}",
            )
            return
        text, mime = rendered_text(result.get("data", {}))
        self.result.inline_values.append(
            InlineValue(self.where, expr.line, expr.col, expr.expression, text, mime)
        )
        if not text:
            self.add(
                expr.line,
                expr.col,
                "error",
                "inline-empty",
                f"`{expr.expression}` has an empty value, so Quarto leaves the expression "
                "in the page as code; move it into a cell with `#| include: false`",
            )
            return
        why = bad_output(text)
        if why:
            self.add(
                expr.line,
                expr.col,
                "error",
                "bad-output",
                f"inline value of `{expr.expression}` {why}: {text[:80]!r}",
            )


_Plan = list[tuple[str, CodeCell | list[InlineExpr]]]


def _plan(p: Path) -> tuple[_Run, _Plan]:
    """What Quarto sends to the kernel for one chapter, in order: the cells it runs, and
    batches of the inline expressions that stand between two cells."""
    display = _display_path(p)
    doc = read_qmd(p)
    run = _Run(doc, display, 0.0)
    plan: _Plan = []
    try:
        steps = list(iter_steps(doc))
    except IncludeError as exc:
        run.where = _display_path(exc.doc.path) if exc.doc.path else display
        run.add(exc.include.line, 1, "error", "include", str(exc))
        run.result.completed = False
        return run, []
    for owner, item in steps:
        where = _display_path(owner.path) if owner.path else display
        if isinstance(item, CodeCell):
            if doc.runs(item):  # the chapter's own execute options apply to includes
                plan.append((where, item))
        elif plan and isinstance(plan[-1][1], list) and plan[-1][0] == where:
            plan[-1][1].append(item)
        else:
            plan.append((where, [item]))
    return run, plan


# Run silently before each chapter when one kernel serves several: Quarto gives every
# chapter a fresh kernel, so the previous chapter's names, figures, working directory
# and document variables must not leak into the next. Imported modules stay loaded,
# which is the point (importing mlsys, numpy and matplotlib is most of a kernel's start).
# ``%reset`` also drops the module attributes ``multiprocessing`` reads from __main__
# (``__spec__``), so they are put back.
_FRESH_CHAPTER = """\
(lambda ip, keep: (ip.run_line_magic("reset", "-f"), ip.user_ns.update(keep)))(
    get_ipython(),
    {{k: globals()[k] for k in ("__doc__", "__loader__", "__package__", "__spec__")}},
)
import os as _os, sys as _sys
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
_os.chdir({cwd!r})
_os.environ["QUARTO_DOCUMENT_PATH"] = {doc_dir!r}
_os.environ["QUARTO_DOCUMENT_FILE"] = {doc_file!r}
del _os, _sys
"""


def _new_client(nb: Any, timeout: float, cwd: Path) -> Any:
    from nbclient import NotebookClient

    return NotebookClient(
        nb,
        timeout=timeout,
        allow_errors=True,
        record_timing=False,
        kernel_name="python3",
        kernel_manager_class=_kernel_manager_class(),
        # The kernel listens on loopback only; its warning about unencrypted TCP is noise,
        # and ipykernel logs the interrupt jupyter_client sends at shutdown as an ERROR.
        # Cell errors reach us as messages, never through this log.
        extra_arguments=["--IPKernelApp.log_level=CRITICAL"],
        resources={"metadata": {"path": str(cwd)}},
    )


def _run_chapter(client: Any, nb: Any, run: _Run, plan: _Plan) -> bool:
    """Send one chapter's plan to a running kernel; ``False`` when the kernel is no
    longer usable (it died or is still busy with a timed-out cell)."""
    import nbformat
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    line_now = 1
    try:
        for where, item in plan:
            run.where = where
            if isinstance(item, CodeCell):
                line_now = item.header_line
                nb.cells.append(nbformat.v4.new_code_cell(item.code))
                node = client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
                count = node.get("execution_count")
                if count:
                    run.by_count[int(count)] = (item, where)
                errors = [o for o in node.outputs if o.get("output_type") == "error"]
                if errors and item.options.get("error", False) is not True:
                    run.cell_failed(item, count, errors[0])
                    run.result.completed = False
                    break  # Quarto stops the render at the first failing cell
                run.check_outputs(item, node.outputs)
            else:
                line_now = item[0].line
                user_expressions = {str(i): e.expression for i, e in enumerate(item)}
                msg_id = client.kc.execute(
                    "", silent=False, store_history=False, user_expressions=user_expressions
                )
                reply = client.wait_for_reply(msg_id) or {}
                results = reply.get("content", {}).get("user_expressions", {})
                for i, expr in enumerate(item):
                    run.record_inline(expr, results.get(str(i), {"status": "error"}))
    except CellTimeoutError:
        run.add(line_now, 1, "error", "timeout", f"cell did not finish in {run.timeout:g} s")
        run.result.completed = False
        return False
    except DeadKernelError as exc:
        run.add(line_now, 1, "error", "kernel", f"the kernel died: {exc}")
        run.result.completed = False
        return False
    return True


def _run_in_one_kernel(
    paths: Sequence[Path], timeout: float, done: Callable[[ExecutionResult], None] | None = None
) -> list[ExecutionResult]:
    """Run chapters one after another in one kernel, each in a fresh namespace.

    A kernel that dies or times out is replaced for the chapters after it. ``done`` is
    called with each chapter's result as soon as the chapter has run.
    """
    import nbformat

    results: list[ExecutionResult] = []
    pending = list(paths)
    while pending:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "language": "python",
            "display_name": "Python 3",
        }
        first = pending[0]
        client = _new_client(nb, timeout, _execute_dir(first))
        with client.setup_kernel(env=_kernel_env(first)):
            while pending:
                p = pending.pop(0)
                run, plan = _plan(p)
                run.timeout = timeout
                results.append(run.result)
                if not plan:
                    if done is not None:
                        done(run.result)
                    continue
                fresh = _FRESH_CHAPTER.format(
                    cwd=str(_execute_dir(p)), doc_dir=str(p.parent), doc_file=p.name
                )
                msg_id = client.kc.execute(fresh, silent=True, store_history=False)
                reply = client.wait_for_reply(msg_id) or {}
                if reply.get("content", {}).get("status") != "ok":
                    run.add(1, 1, "error", "kernel", "could not give the chapter a fresh kernel")
                    run.result.completed = False
                    if done is not None:
                        done(run.result)
                    break
                finished = _run_chapter(client, nb, run, plan)
                if done is not None:
                    done(run.result)
                if not finished:
                    break  # start a new kernel for the chapters left
    return results


def execute_document(path: str | Path, *, timeout: float = 120.0) -> ExecutionResult:
    """Run one chapter's python cells and inline expressions in a fresh kernel.

    Parameters
    ----------
    path : str or Path
        The .qmd file.
    timeout : float
        Seconds allowed to each cell (and to each group of inline expressions).

    Returns
    -------
    ExecutionResult
    """
    return _run_in_one_kernel([Path(path)], timeout)[0]


def _execute_dir(path: Path) -> Path:
    """Where the kernel starts: the chapter's directory, or the project's root when
    ``_quarto.yml`` says ``project: execute-dir: project`` (Quarto's option)."""
    here = path.resolve().parent
    for d in [here, *here.parents]:
        for name in ("_quarto.yml", "_quarto.yaml"):
            config = d / name
            if config.is_file():
                text = config.read_text(encoding="utf-8", errors="replace")
                if re.search(r"^\s+execute-dir:\s*project\s*$", text, re.MULTILINE):
                    return d
                return here
    return here


def execute_documents(
    paths: Sequence[str | Path],
    *,
    jobs: int = 1,
    timeout: float = 120.0,
    progress: Callable[[ExecutionResult, int, int], None] | None = None,
) -> list[ExecutionResult]:
    """Run chapters in as few kernels as ``jobs`` allows, each chapter in a fresh namespace.

    Quarto starts one kernel per chapter; starting one and importing mlsys, numpy and
    matplotlib into it costs more than most chapters take to run, so here one kernel
    serves many chapters: before each, its namespace is reset (``%reset -f``), its
    figures closed, its working directory and ``QUARTO_DOCUMENT_*`` variables set to
    the chapter's. What a chapter leaves in an imported module (a catalog entry it
    registered) is visible to the chapters after it in the same kernel; Quarto would not
    show it. A kernel that dies or times out is replaced for the chapters after it.

    Parameters
    ----------
    paths : sequence of str or Path
        .qmd files. Files whose name starts with ``_`` are skipped: Quarto does not
        render them on their own (they are included into other pages).
    jobs : int
        Kernels run at once; the chapters are shared among them by size.
    timeout : float
        Seconds allowed to each cell.
    progress : callable, optional
        Called as ``progress(result, finished, total)`` as each chapter finishes (from
        the kernel's thread; calls do not overlap).

    Returns
    -------
    list of ExecutionResult
        In the order of ``paths``.
    """
    runnable = [Path(p) for p in paths if not Path(p).name.startswith("_")]
    if not runnable:
        return []
    groups: list[list[Path]] = [[] for _ in range(max(1, min(jobs, len(runnable))))]
    loads = [0] * len(groups)
    # Largest first onto the least-loaded kernel: chapter size is a fair proxy for its
    # run time, and it keeps one kernel from getting all the heavy chapters.
    for p in sorted(runnable, key=lambda q: -q.stat().st_size if q.exists() else 0):
        i = loads.index(min(loads))
        groups[i].append(p)
        loads[i] += p.stat().st_size if p.exists() else 0
    order = {p: i for i, p in enumerate(runnable)}
    for group in groups:
        group.sort(key=order.__getitem__)
    report = _reporter(progress, len(runnable))
    if len(groups) == 1:
        done = _run_in_one_kernel(groups[0], timeout, report)
    else:
        with ThreadPoolExecutor(max_workers=len(groups)) as pool:
            runs = pool.map(lambda g: _run_in_one_kernel(g, timeout, report), groups)
            done = [r for rs in runs for r in rs]
    by_path = {r.path: r for r in done}
    return [by_path[p] for p in runnable]


def _reporter(
    progress: Callable[[ExecutionResult, int, int], None] | None, total: int
) -> Callable[[ExecutionResult], None] | None:
    """``progress`` with a running count of finished chapters, safe across kernels."""
    if progress is None:
        return None
    lock = threading.Lock()
    finished = [0]

    def report(result: ExecutionResult) -> None:
        with lock:
            finished[0] += 1
            progress(result, finished[0], total)

    return report
