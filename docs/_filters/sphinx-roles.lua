-- Sphinx roles in docstrings (":func:`fmt`", ":class:`~mlsys.MemoryModel`") reach the
-- reference pages as a Str ending in ":role:" followed by a Code span. quartodoc's
-- interlinks filter links the Markdown form [](`name`) and leaves roles as text, so this
-- filter, run just before it, rewrites each role into that form and drops the role word.
-- A name the inventory does not know ends up as plain code, never as ":func:".

local ROLE = "^(.-):(%a[%w_]*):$"          -- ":func:" or "(:func:"
local DOMAIN_ROLE = "^(.-):(%a[%w_]*:%a[%w_]*):$" -- ":py:func:"

local function role_prefix(text)
  local before = text:match(DOMAIN_ROLE)
  if before ~= nil then
    return before
  end
  return text:match(ROLE)
end

function Inlines(inlines)
  for i = #inlines - 1, 1, -1 do
    local str, code = inlines[i], inlines[i + 1]
    if str.t == "Str" and code.t == "Code" then
      local before = role_prefix(str.text)
      if before ~= nil then
        inlines[i + 1] = pandoc.Link({}, "%60" .. code.text .. "%60")
        if before == "" then
          inlines:remove(i)
        else
          str.text = before
        end
      end
    end
  end
  return inlines
end
