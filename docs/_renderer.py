"""The API reference's renderer: quartodoc's Markdown renderer, with module constants.

quartodoc's Markdown renderer lists a module's (or a class's) attributes in a summary
table whose names link to ``#<dotted path>``, but writes a section only for functions,
methods and classes, so each link pointed at an anchor no page had
(``formulas.device.html#mlsys.core.formulas.overheads.KERNEL_OVERHEAD_S``). This renderer
writes a short section for each attribute as well: its name (the anchor), its docstring.

``_quarto.yml`` names it (``renderer: style: docs._renderer.py``); ``quartodoc build``
imports it from the repository's root.
"""

from __future__ import annotations

from typing import Union

from plum import dispatch
from quartodoc import layout
from quartodoc.renderers import MdRenderer

__all__ = ["Renderer"]


class Renderer(MdRenderer):
    """quartodoc's ``markdown`` style, plus a section for every documented attribute."""

    style = "mlsys"

    @dispatch
    def render(self, el: Union[layout.DocClass, layout.DocModule]):  # noqa: UP007 (plum)
        text = super().render(el)
        attrs = [
            x
            for x in (el.members or ())
            if isinstance(x, layout.DocAttribute) and x.obj.is_attribute
        ]
        if not attrs:
            return text
        n_incr = 1 if el.flat else 2
        with self._increment_header(n_incr):
            sections = "\n\n".join(self._attribute(x) for x in attrs)
        # under the attributes' summary table (the heading quartodoc writes, then the
        # table, which ends at the first blank line), else at the end
        head = f"{'#' * (self.crnt_header_level + 1)} Attributes\n\n"
        start = text.find(head)
        if start < 0:
            return f"{text}\n\n{sections}"
        end = text.find("\n\n", start + len(head))
        end = len(text) if end < 0 else end
        return f"{text[:end]}\n\n{sections}{text[end:]}"

    def _attribute(self, el: layout.DocAttribute) -> str:
        """An attribute's section: ``### NAME { #anchor }``, then its docstring."""
        title = f"{'#' * self.crnt_header_level} {el.name} {{ #{el.anchor} }}"
        with self._increment_header():
            body = self.render(el.obj)
        return "\n\n".join(part for part in (title, body) if part)
