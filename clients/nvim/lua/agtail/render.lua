-- A session as buffer lines: a header, then one block per event.
--
-- Each event starts with a line "[SEQ] ..." (the quickfix list finds an event by it). A user
-- message starts a turn (a fold of level 1); a tool call is one line "[SEQ] ⚙ Tool  summary"
-- whose input and output lines below it are a fold of level 2, closed by default, so each
-- call reads as one line until opened. render.event returns the lines, their fold levels
-- (for foldexpr) and per-line facts (the subagent a line opens, the event's seq).
local M = {}

local config = require("agtail.config")

--- Text as buffer lines: split on newlines, control characters shown as "?".
local function lines_of(text)
  local out = {}
  text = tostring(text or ""):gsub("\r\n", "\n"):gsub("[%z\1-\8\11-\31\127]", "?")
  for line in (text .. "\n"):gmatch("(.-)\n") do
    table.insert(out, line)
  end
  return out
end
M.lines_of = lines_of

local function one_line(text, limit)
  local s = tostring(text or ""):gsub("%s+", " ")
  s = vim.trim(s:gsub("[%z\1-\31\127]", "?"))
  if #s > limit then
    s = s:sub(1, limit) .. "…"
  end
  return s
end
M.one_line = one_line

--- "2026-11-30T00:28:43.959Z" -> "2026-11-30 00:28" (as the agent wrote it, UTC).
function M.when(ts)
  if type(ts) ~= "string" or #ts < 16 then
    return "?"
  end
  return ts:sub(1, 10) .. " " .. ts:sub(12, 16)
end

function M.ref(session)
  return session.agent .. ":" .. session.id
end

--- The buffer name that shows a session (agtail://AGENT:ID, or agtail://@COLLECTION/AGENT:ID
--- for a copy imported into COLLECTION).
function M.bufname(session)
  if session.imported and session.collection and session.collection ~= vim.NIL then
    return "agtail://@" .. session.collection .. "/" .. M.ref(session)
  end
  return "agtail://" .. M.ref(session)
end

--- "agtail://[@COLL/]AGENT:ID" -> agent, id, collection (nil when not such a name).
function M.parse_bufname(name)
  local rest = name:match("^agtail://(.+)$")
  if not rest then
    return nil
  end
  local collection
  if rest:sub(1, 1) == "@" then
    collection, rest = rest:match("^@([^/]+)/(.+)$")
    if not rest then
      return nil
    end
  end
  local agent, id = rest:match("^([^:]+):(.+)$")
  if not agent then
    return nil
  end
  return agent, id, collection
end

local function str(v)
  if v == nil or v == vim.NIL then
    return nil
  end
  return tostring(v)
end

local function cost(usage)
  if type(usage) ~= "table" then
    return nil
  end
  local tokens = tonumber(usage.total_tokens) or 0
  local c = usage.cost_usd
  local money = type(c) == "number" and string.format("$%.2f", c) or "cost unknown"
  return string.format("%d tokens, %s", tokens, money)
end
M.cost = cost

--- The user's own state in one line ("★ starred  ·  labels: client=acme  ·  hidden"), or nil.
function M.state_text(session)
  local st = session.state
  if type(st) ~= "table" then
    return nil
  end
  local parts = {}
  if st.starred == true then
    table.insert(parts, "★ starred")
  end
  local keys = vim.tbl_keys(type(st.labels) == "table" and st.labels or {})
  table.sort(keys)
  local labels = {}
  for _, k in ipairs(keys) do
    local v = st.labels[k]
    table.insert(labels, (v == "" or v == vim.NIL) and k or (k .. "=" .. tostring(v)))
  end
  if #labels > 0 then
    table.insert(parts, "labels: " .. one_line(table.concat(labels, " "), 200))
  end
  if st.hidden == true then
    table.insert(parts, "hidden")
  end
  return #parts > 0 and table.concat(parts, "  ·  ") or nil
end

function M.header(session)
  local lines = { "# " .. one_line(str(session.title) or str(session.first_prompt) or "(untitled)", 200) }
  local where = { M.ref(session) }
  for _, key in ipairs({ "project", "cwd", "git_branch" }) do
    if str(session[key]) then
      table.insert(where, str(session[key]))
    end
  end
  table.insert(lines, "# " .. table.concat(where, "  ·  "))
  local facts = { M.when(session.started) .. " → " .. M.when(session.ended), (session.messages or 0) .. " msgs" }
  if cost(session.usage) then
    table.insert(facts, cost(session.usage))
  end
  table.insert(lines, "# " .. table.concat(facts, "  ·  "))
  if session.imported then
    table.insert(lines, "# [imported from collection " .. (str(session.collection) or "?") .. "]")
  end
  if session.archived then
    table.insert(lines, "# [archived: the agent's own file is gone]")
  end
  if type(session.parent) == "table" then
    table.insert(lines, "# [subagent of " .. session.parent.agent .. ":" .. session.parent.id .. "]")
  end
  local own = M.state_text(session)
  if own then
    table.insert(lines, "# " .. own)
  end
  table.insert(lines, "")
  return lines
end

local function json_line(value)
  local ok, text = pcall(vim.json.encode, value)
  return ok and text or tostring(value)
end

--- A short summary of a tool call's input: its command, path, pattern or description.
local function tool_summary(input)
  if type(input) ~= "table" then
    return one_line(str(input) or "", 120)
  end
  for _, key in ipairs({ "command", "cmd", "file_path", "path", "pattern", "query", "url", "description", "prompt" }) do
    local v = input[key]
    if type(v) == "table" then
      v = table.concat(vim.tbl_map(tostring, v), " ")
    end
    if v ~= nil and v ~= vim.NIL then
      return one_line(v, 120)
    end
  end
  return one_line(json_line(input), 120)
end

--- One event: lines, fold levels, and facts per line ({seq=, subagent=}).
function M.event(ev, session)
  local lines, levels, facts = {}, {}, {}
  local seq = ev.seq
  local kind = str(ev.kind) or "unknown"
  local function add(line, level, fact)
    table.insert(lines, line)
    table.insert(levels, level)
    table.insert(facts, fact or { seq = seq })
  end
  local head = "[" .. tostring(seq) .. "] "
  if kind == "tool_use" or kind == "tool_result" then
    local tool = str(ev.tool) or "?"
    local line = head .. "⚙ " .. tool .. "  " .. tool_summary(ev.input)
    if ev.is_error == true then
      line = line .. "  ✗ error"
    end
    local fact = { seq = seq }
    local extra = type(ev.extra) == "table" and ev.extra or {}
    if str(extra.subagent) then
      fact.subagent = session.agent .. ":" .. str(extra.subagent)
      line = line .. "  → " .. fact.subagent
    end
    add(line, ">2", fact)
    if ev.input ~= nil and ev.input ~= vim.NIL then
      for _, l in ipairs(lines_of(type(ev.input) == "table" and json_line(ev.input) or ev.input)) do
        add("    in: " .. l, "2")
      end
    end
    local result = ev.result
    if result == nil or result == vim.NIL then
      result = ev.text
    end
    if result ~= nil and result ~= vim.NIL then
      local out = lines_of(type(result) == "table" and json_line(result) or result)
      local limit = config.options.tool_output_lines
      for i, l in ipairs(out) do
        if i > limit then
          add("    … " .. (#out - limit) .. " more lines (agtail show " .. M.ref(session) .. " --full)", "2")
          break
        end
        add("   out: " .. l, "2")
      end
    end
    return lines, levels, facts
  end
  local role = str(ev.role) or ""
  local label
  if kind == "text" then
    label = role ~= "" and role or "text"
  elseif kind == "hook" then
    local hook = type(ev.hook) == "table" and ev.hook or {}
    label = "hook " .. (str(hook.event) or "") .. " " .. (str(hook.tool) or "")
  else
    label = (role ~= "" and (role .. " ") or "") .. kind
  end
  local turn = kind == "text" and role == "user"
  add(head .. vim.trim(label) .. "  " .. M.when(ev.ts), turn and ">1" or "1")
  local text = str(ev.text)
  if not text and kind == "hook" and type(ev.hook) == "table" then
    text = str(ev.hook.text) or str(ev.hook.command)
  end
  if not text and ev.raw ~= nil and ev.raw ~= vim.NIL then
    text = json_line(ev.raw)
  end
  for _, l in ipairs(lines_of(text or "")) do
    add("    " .. l, "1")
  end
  add("", "1")
  return lines, levels, facts
end

return M
