-- mlsys: show where each number in a page comes from.
--
-- mlsys's formatting functions write every inline number as a Pandoc span,
--   [3.35 TB/s]{.mlsys-num title="NVIDIA H100 SXM5 80GB, memory bandwidth: datasheet, ..."}
-- In HTML the span keeps its title (the browser's own tooltip) and this filter adds a
-- small script and stylesheet that show it as a styled hover box (Quarto's bundled
-- tippy.js when the page has it). In every other format (PDF, Word, ePub) the span is
-- replaced by its text: the number alone, as the author wrote it.

local function is_html()
  return quarto.doc.is_format("html:js")
end

local added = false

local function add_dependency()
  if added then
    return
  end
  added = true
  quarto.doc.add_html_dependency({
    name = "mlsys-provenance",
    version = "1.0.0",
    scripts = { { path = "mlsys.js", afterBody = true } },
    stylesheets = { "mlsys.css" },
  })
end

function Span(el)
  if not el.classes:includes("mlsys-num") then
    return nil
  end
  if is_html() then
    add_dependency()
    return nil
  end
  return el.content
end
