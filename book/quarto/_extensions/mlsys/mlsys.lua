-- mlsys: show where each number in a page comes from.
--
-- mlsys's formatting functions write every inline number as a Pandoc span,
--   [3.35 TB/s]{.mlsys-num title="NVIDIA H100 SXM5 80GB, memory bandwidth: datasheet, ..."}
-- In HTML the span keeps its title (the browser's own tooltip) and this filter adds a
-- small script and stylesheet that show it as a styled hover box (Quarto's bundled
-- tippy.js when the page has it). In every other format (PDF, Word, ePub) the span is
-- replaced by its text: the number alone, as the author wrote it.
--
-- In every format, a number and the unit that follows it are joined by a no-break
-- space ("400 Gb/s", "`{python} fmt(x)` FLOP/byte", a source's "141 GB HBM3e"), so a
-- line never ends between them.

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

-- Units a number is printed with: a word after a number that is one of these (up to a
-- comma, semicolon, colon, full stop or bracket) is joined to it by a no-break space.
local UNITS = {}
for _, u in ipairs({
  "B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB",
  "B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "KiB/s", "MiB/s", "GiB/s",
  "b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s", "Gbps", "Tbps",
  "FLOP", "FLOPs", "FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s",
  "EFLOP/s", "FLOP/B", "FLOP/byte", "GFLOPS", "TFLOPS", "PFLOPS",
  "W", "kW", "MW", "GW", "Wh", "kWh", "MWh", "GWh", "J", "kJ", "MJ",
  "s", "ms", "µs", "us", "ns", "min", "h", "d", "yr", "Hz", "MHz", "GHz", "°C",
  "g", "kg", "t", "L", "tokens/s", "token/s", "tok/s", "samples/s", "GPU-h", "GPU-hours",
  "GBps", "TBps", "MBps", "GFLOPs", "TFLOPs", "PFLOPs", "kFLOP", "MFLOP", "GFLOP", "TFLOP",
  "PFLOP", "EFLOP", "W·h", "kW·h", "MW·h",
}) do
  UNITS[u] = true
end

local NBSP = "\u{00A0}"

local function ends_in_digit(el)
  if el.t == "Str" then
    return el.text:match("%d$") ~= nil
  end
  if el.t == "Span" then
    return pandoc.utils.stringify(el):match("%d$") ~= nil
  end
  return false
end

local function is_unit(el)
  if el == nil or el.t ~= "Str" then
    return false
  end
  local word = el.text:match("^([^,;:%(%)%[%]%?!'\"]+)") or ""
  word = word:gsub("\u{00A0}.*$", "") -- a no-break space already ends the unit
  word = word:gsub("[\u{201D}\u{2019}]+$", "") -- a closing quotation mark
  word = word:gsub("%.$", "")
  -- "200 Gb/s-per-lane": the unit before a hyphenated qualifier
  return UNITS[word] == true or UNITS[word:match("^([^-]+)%-") or ""] == true
end

function Inlines(inlines)
  for i = 1, #inlines - 2 do
    local gap = inlines[i + 1]
    if (gap.t == "Space" or gap.t == "SoftBreak")
      and ends_in_digit(inlines[i])
      and is_unit(inlines[i + 2])
    then
      inlines[i + 1] = pandoc.Str(NBSP)
    end
  end
  return inlines
end
