-- :AgtailBlame and :AgtailHistory: which recorded session wrote a line of the current file,
-- and every recorded change of it (`agtail blame` / `agtail history`, docs/provenance.md).
local M = {}

local cli = require("agtail.cli")
local render = require("agtail.render")
local view = require("agtail.view")

local function fail(message)
  vim.notify(message, vim.log.levels.ERROR)
  return nil
end

local function file_of(buf)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or name:find("^agtail://") then
    return nil
  end
  return vim.fn.fnamemodify(name, ":p")
end

local function nonnil(v)
  return v ~= nil and v ~= vim.NIL
end

--- The lines that describe one history record (session, time, kind, prompt).
function M.describe(record)
  local s = record.session or {}
  local head = string.format(
    "%s  %s:%s  #%s  %s%s",
    render.when(nonnil(record.time) and record.time or nil),
    tostring(s.agent),
    tostring(nonnil(s.short_id) and s.short_id or s.id),
    tostring(record.seq),
    tostring(record.kind),
    record.failed and "  (failed)" or ""
  )
  local lines = { head }
  local prompt = nonnil(record.prompt) and record.prompt.text or nil
  if nonnil(prompt) then
    table.insert(lines, "> " .. render.one_line(prompt, 200))
  end
  return lines
end

--- Open the session of RECORD with the cursor on the event that made the change.
function M.open_record(record)
  local s = record.session or {}
  local buf = view.open(s.agent .. ":" .. s.id)
  local st = view.state[buf]
  if st and st.facts then
    local best
    for lnum, fact in pairs(st.facts) do
      if fact.seq == record.seq and (best == nil or lnum < best) then
        best = lnum
      end
    end
    if best then
      vim.api.nvim_win_set_cursor(0, { best, 0 })
    end
  end
  return buf
end

--- :AgtailBlame — the session and prompt that last wrote the line under the cursor, in a
--- float; `gs` in the file (or the float) opens that session at that event.
function M.blame()
  local buf = vim.api.nvim_get_current_buf()
  local path = file_of(buf)
  if not path then
    return fail("agtail: :AgtailBlame works on a file's buffer")
  end
  if vim.bo[buf].modified then
    vim.notify("agtail: the buffer has unsaved changes: blaming the file as saved", vim.log.levels.WARN)
  end
  local line = vim.api.nvim_win_get_cursor(0)[1]
  local doc, err = cli.json({ "blame", path, "-L", line .. "," .. line })
  if not doc then
    return fail(err)
  end
  local entry = (doc.lines or {})[1]
  local lines, record
  if not entry or not nonnil(entry.record) then
    lines = { "line " .. line .. ": not from a recorded session" }
  else
    record = doc.records[tostring(entry.record)]
    lines = M.describe(record)
    if entry.ambiguous then
      table.insert(lines, "(ambiguous: placed inexactly, found out of order, or another case)")
    end
    table.insert(lines, "gs: open this session at this event")
  end
  vim.b[buf].agtail_blame = record
  if record then
    vim.keymap.set("n", "gs", function()
      M.open_record(vim.b[buf].agtail_blame)
    end, { buffer = buf, desc = "agtail: open the session that wrote this line" })
  end
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  local fbuf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(fbuf, 0, -1, false, lines)
  vim.bo[fbuf].modifiable = false
  local win = vim.api.nvim_open_win(fbuf, false, {
    relative = "cursor", row = 1, col = 0, width = math.min(width, vim.o.columns - 4),
    height = #lines, style = "minimal", border = "single",
  })
  vim.api.nvim_create_autocmd({ "CursorMoved", "BufLeave" }, {
    buffer = buf, once = true,
    callback = function()
      pcall(vim.api.nvim_win_close, win, true)
    end,
  })
  return { lines = lines, record = record, win = win }
end

--- :AgtailHistory — every recorded change of the current file, newest first, in a scratch
--- buffer; <CR> on a change opens its session at that event.
function M.history(limit)
  local path = file_of(vim.api.nvim_get_current_buf())
  if not path then
    return fail("agtail: :AgtailHistory works on a file's buffer")
  end
  local doc, err = cli.json({ "history", path, "--limit", tostring(limit or 50) })
  if not doc then
    return fail(err)
  end
  local lines, at = {}, {}
  for _, record in ipairs(doc.records or {}) do
    for i, l in ipairs(M.describe(record)) do
      table.insert(lines, l)
      if i == 1 then
        at[#lines] = record
      end
    end
    for _, hunk in ipairs(record.hunks or {}) do
      for _, l in ipairs(hunk.lines or {}) do
        table.insert(lines, "  " .. l)
      end
    end
    table.insert(lines, "")
  end
  if #lines == 0 then
    lines = { "no recorded session changed " .. path }
  end
  vim.cmd("new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.api.nvim_buf_set_name(buf, "agtail-history://" .. path)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = "diff"
  vim.keymap.set("n", "<CR>", function()
    local lnum = vim.api.nvim_win_get_cursor(0)[1]
    while lnum > 0 and not at[lnum] do
      lnum = lnum - 1
    end
    if at[lnum] then
      M.open_record(at[lnum])
    end
  end, { buffer = buf, desc = "agtail: open the session of this change" })
  return buf
end

return M
