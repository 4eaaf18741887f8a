-- Your own order from Neovim: :AgtailLabel, :AgtailUnlabel, :AgtailStar, :AgtailUnstar,
-- :AgtailTitle, :AgtailHide, :AgtailUnhide (docs/organize.md). Each runs the `agtail`
-- command of the same name, on the session of the transcript buffer, or on the AGENT:ID given
-- first outside one; a transcript buffer of that session is drawn again with its new state.
local M = {}

local cli = require("agtail.cli")
local render = require("agtail.render")
local view = require("agtail.view")

local function fail(message)
  vim.notify(message, vim.log.levels.ERROR)
  return nil
end

--- (the session's AGENT:ID, the remaining arguments), from the buffer or the first argument.
local function target(args, command)
  local s = view.session()
  if s then
    return render.ref(s), args
  end
  local first = args[1]
  if not first or not first:find(":", 1, true) then
    return nil, command .. " needs AGENT:ID outside a transcript buffer"
  end
  return first, vim.list_slice(args, 2)
end

local function redraw(ref)
  for buf, st in pairs(view.state) do
    if vim.api.nvim_buf_is_valid(buf) and st.session and render.ref(st.session) == ref then
      view.load_buffer(buf, vim.api.nvim_buf_get_name(buf))
    end
  end
end

local function run(ref, argv)
  local doc, err = cli.json(argv)
  if not doc then
    return fail(err)
  end
  local said = {}
  for _, c in ipairs(doc.changes or {}) do
    local thing = c.what == "label" and ("label " .. tostring(c.key)) or c.what
    local verb = not c.accepted and "kept as it was" or (c.value == vim.NIL and "removed" or "set")
    table.insert(said, thing .. " " .. verb)
  end
  vim.notify("agtail: " .. ref .. ": " .. table.concat(said, ", "))
  redraw(ref)
  return doc
end

--- :AgtailLabel [AGENT:ID] KEY[=VALUE]…, and with remove: :AgtailUnlabel.
function M.label(args, remove)
  local ref, rest = target(args, remove and ":AgtailUnlabel" or ":AgtailLabel")
  if not ref then
    return fail("agtail: " .. rest)
  end
  if #rest == 0 then
    return fail("agtail: name a label: KEY or KEY=VALUE")
  end
  local argv = { "label", ref }
  vim.list_extend(argv, rest)
  if remove then
    table.insert(argv, "--remove")
  end
  return run(ref, argv)
end

--- :AgtailStar, :AgtailUnstar, :AgtailHide, :AgtailUnhide [AGENT:ID].
function M.mark(command, args)
  local ref, problem = target(args, ":Agtail" .. command:sub(1, 1):upper() .. command:sub(2))
  if not ref then
    return fail("agtail: " .. problem)
  end
  return run(ref, { command, ref })
end

--- :AgtailTitle [TEXT]: your title for the buffer's session; without TEXT, the agent's again.
function M.title(text)
  local s = view.session()
  if not s then
    return fail("agtail: :AgtailTitle works in a transcript buffer (open one with :Agtail)")
  end
  local ref = render.ref(s)
  text = vim.trim(text or "")
  return run(ref, text == "" and { "title", ref, "--clear" } or { "title", ref, "--", text })
end

return M
