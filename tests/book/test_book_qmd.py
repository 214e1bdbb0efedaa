"""The .qmd parser finds what Quarto's Jupyter engine executes, at the right lines."""

from __future__ import annotations

import textwrap

from mlsys.book.qmd import parse_qmd


def _doc(text: str):
    return parse_qmd(textwrap.dedent(text).lstrip("\n"), "t.qmd")


def test_front_matter_cell_options_and_lines():
    doc = _doc(
        """
        ---
        title: "T"
        execute:
          eval: true
        ---

        ```{python}
        #| label: fig-a
        #| echo: false
        x = 1
        ```
        """
    )
    assert doc.front_matter["title"] == "T"
    (cell,) = doc.cells
    assert (cell.language, cell.header_line, cell.code_line) == ("python", 7, 8)
    assert cell.options == {"label": "fig-a", "echo": False}
    assert cell.option_lines == 2
    # Quarto strips the option lines before sending the code to the kernel.
    assert cell.code == "x = 1"
    assert doc.runs(cell)


def test_inline_expression_line_and_column():
    doc = _doc(
        """
        Intro line.
        Bandwidth is `{python} fmt(bw)` and `{python}   n_gpus ` GPUs.
        """
    )
    first, second = doc.inlines
    # "Bandwidth is `{python} " is 23 characters: the expression starts at column 24.
    assert (first.expression, first.line, first.col) == ("fmt(bw)", 2, 24)
    # Quarto strips the expression; the column is that of its first character.
    assert second.expression == "n_gpus"
    # 13 + 18 (first span) + 5 (" and ") + 9 ("`{python}") + 3 spaces = 48 before it.
    assert second.col == 49


def test_display_only_blocks_are_not_cells():
    doc = _doc(
        """
        ```{.python}
        from mlsys import Shown
        ```

        ```python
        also_shown = 1
        ```

        ```{{python}}
        escaped = 1
        ```

        ```{ojs}
        viewof x = Inputs.range([0, 1])
        ```
        """
    )
    assert [c.language for c in doc.cells] == ["ojs"]
    assert doc.python_cells == []


def test_longer_fence_holds_three_backticks():
    doc = _doc(
        """
        ````{python}
        s = '''
        ```
        '''
        ````
        after = 1
        """
    )
    (cell,) = doc.cells
    assert cell.source == "s = '''\n```\n'''"
    assert doc.inlines == []


def test_cell_inside_plain_fence_is_executed_but_marked():
    # Quarto's converter starts a cell at any ```{python} line, even inside a ````
    # block: its docs say to write ```{{python}} to show one literally.
    doc = _doc(
        """
        ````markdown
        ```{python}
        y = 2
        ```
        ````
        """
    )
    (cell,) = doc.cells
    assert cell.nested and cell.code_line == 3


def test_eval_false_cell_and_document_default():
    doc = _doc(
        """
        ```{python}
        #| eval: false
        pseudo()
        ```
        """
    )
    assert not doc.runs(doc.cells[0])
    off = _doc(
        """
        ---
        execute:
          eval: false
        ---
        ```{python}
        x = 1
        ```
        """
    )
    assert not off.runs(off.cells[0])


def test_inline_rules_follow_quarto_regex():
    doc = _doc(
        """
        Not inline: ``{python} x`` nor `x {python} y` nor `{{python}} z` nor `{r} w`.
        Inline: `{python} a`; in a code block Quarto evaluates it too:
        ```
        `{python} b`
        ```
        ```{python}
        s = "`{python} c`"
        ```
        """
    )
    assert [e.expression for e in doc.inlines] == ["a", "b"]
    assert [e.after_cell for e in doc.inlines] == [-1, -1]


def test_inline_after_cell_index_and_indented_cell():
    doc = _doc(
        """
        1. A list item with a cell:

           ```{python}
           z = 3
           ```

        z is `{python} z`.
        """
    )
    (cell,) = doc.cells
    assert cell.indent == 3 and cell.source == "z = 3"
    assert doc.inlines[0].after_cell == 0


def test_bad_cell_options_are_recorded():
    doc = _doc(
        """
        ```{python}
        #| echo: [unclosed
        x = 1
        ```
        """
    )
    assert doc.cells[0].options_error
