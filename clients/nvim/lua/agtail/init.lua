-- agtail.nvim: the commands (plugin/agtail.lua defines them; this module does the work).
local M = {}

local config = require("agtail.config")
local cli = require("agtail.cli")
local render = require("agtail.render")
local view = require("agtail.view")

function M.setup(opts)
  config.setup(opts)
end

local function fail(message)
  vim.notify(message, vim.log.levels.ERROR)
  return nil
end

M.load_buffer = view.load_buffer

--- Recent sessions, most recently active first (the picker's source).
function M.recent(limit)
  local doc, err = cli.json({ "list", "--limit", tostring(limit or config.options.limit) })
  if not doc then
    return fail(err)
  end
  return doc.sessions or {}
end

--- How the picker shows a session: "2026-11-30 00:28  claude-code  demo-app  title".
function M.format_session(s)
  local title = s.title ~= vim.NIL and s.title or (s.first_prompt ~= vim.NIL and s.first_prompt or "")
  local line = string.format(
    "%s  %-12s %-16s %s",
    render.when(s.ended ~= vim.NIL and s.ended or s.started),
    s.agent,
    render.one_line(s.project ~= vim.NIL and s.project or "?", 16),
    render.one_line(title or "", 100)
  )
  if s.imported then
    line = line .. "  [imported: " .. tostring(s.collection) .. "]"
  end
  local own = render.state_text(s)
  if own then
    line = line .. "  [" .. own .. "]"
  end
  return line
end

local function has(module)
  return pcall(require, module)
end

--- Let the user choose one of SESSIONS, then call on_choice(session).
function M.choose(sessions, on_choice)
  local kind = config.options.picker
  if kind == "auto" then
    kind = has("telescope.pickers") and "telescope" or (has("fzf-lua") and "fzf-lua" or "select")
  end
  if kind == "telescope" then
    return require("agtail.pickers").telescope(sessions, M.format_session, on_choice)
  elseif kind == "fzf-lua" then
    return require("agtail.pickers").fzf_lua(sessions, M.format_session, on_choice)
  end
  vim.ui.select(sessions, { prompt = "agtail session", format_item = M.format_session, kind = "agtail" }, function(s)
    if s then
      on_choice(s)
    end
  end)
end

--- :Agtail [AGENT:ID]
function M.pick(ref)
  if ref then
    return view.open(ref)
  end
  local sessions = M.recent()
  if not sessions then
    return
  end
  if #sessions == 0 then
    return fail("agtail: no sessions indexed yet")
  end
  M.choose(sessions, function(s)
    view.open(s)
  end)
end

--- :AgtailSearch {query}: the hits in the quickfix list, best first.
function M.search(query)
  local doc, err = cli.json({ "search", "--limit", tostring(config.options.search_limit), "--", query })
  if not doc then
    return fail(err)
  end
  local items = {}
  for _, hit in ipairs(doc.hits or {}) do
    local s, e = hit.session, hit.event
    local snippet = hit.snippet ~= vim.NIL and hit.snippet or e.text
    table.insert(items, {
      filename = render.bufname(s),
      pattern = "^\\V[" .. tostring(e.seq) .. "] ",
      text = string.format("%s %s  %s", s.agent, render.when(e.ts), render.one_line(snippet or "", 200)),
    })
  end
  vim.fn.setqflist({}, " ", { title = "agtail search: " .. query, items = items })
  if #items == 0 then
    vim.notify("agtail: no matches for " .. query, vim.log.levels.WARN)
  else
    vim.cmd("copen")
  end
  return items
end

--- :AgtailFollow [AGENT:ID]: the session (default: the newest active one), live.
function M.follow(ref)
  local session
  if ref then
    local doc, err = cli.json({ "tail", "-n", "0", ref })
    if not doc then
      return fail(err)
    end
    session = doc.session
  else
    local sessions = M.recent(1)
    if not sessions then
      return
    end
    session = sessions[1]
    if not session then
      return fail("agtail: no sessions indexed yet")
    end
  end
  return view.follow(session)
end

--- :AgtailResume [AGENT:ID]: a terminal in the session's cwd running its resume command.
function M.resume(ref)
  if not ref then
    local s = view.session()
    if not s then
      return fail("agtail: :AgtailResume needs AGENT:ID outside a transcript buffer")
    end
    if s.imported then
      -- `agtail resume AGENT:ID` would mean this machine's own copy, if there is one.
      return fail(
        "agtail: this is the copy imported from collection "
          .. tostring(s.collection)
          .. ": resume it on the machine it came from (this machine's own copy, if any: :AgtailResume "
          .. render.ref(s)
          .. ")"
      )
    end
    ref = render.ref(s)
  end
  local info, err = cli.json({ "resume", ref, "--print" })
  if not info then
    return fail(err)
  end
  local cwd = info.cwd
  if not info.cwd_exists or type(cwd) ~= "string" then
    vim.notify("agtail: the session's directory is gone; resuming in " .. vim.fn.getcwd(), vim.log.levels.WARN)
    cwd = vim.fn.getcwd()
  end
  vim.cmd("botright split")
  vim.cmd("enew")
  local ok, job = pcall(vim.fn.termopen, info.argv, { cwd = cwd })
  if not ok or job <= 0 then
    vim.cmd("bwipeout!")
    return fail("agtail: cannot start " .. tostring(info.argv[1]) .. ": " .. tostring(job))
  end
  vim.api.nvim_buf_set_var(0, "agtail_resume", { argv = info.argv, cwd = cwd, job = job })
  vim.cmd("startinsert")
  return info
end

--- :AgtailStats [SINCE]: tokens and cost by model, today unless SINCE (a date or an age).
function M.stats(since)
  since = since or os.date("%Y-%m-%d")
  local doc, err = cli.json({ "stats", "--by", "model", "--since", since })
  if not doc then
    return fail(err)
  end
  local lines = { "agtail usage since " .. since, "", "total: " .. (render.cost(doc.totals) or "nothing recorded") }
  if #(doc.rows or {}) > 0 then
    table.insert(lines, "")
  end
  for _, row in ipairs(doc.rows or {}) do
    table.insert(lines, string.format("  %-28s %s", tostring(row.key), render.cost(row)))
  end
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  for option, value in pairs({ buftype = "nofile", bufhidden = "wipe", swapfile = false, modifiable = false }) do
    vim.api.nvim_buf_set_option(buf, option, value)
  end
  pcall(vim.api.nvim_buf_set_name, buf, "agtail-stats://" .. since)
  vim.keymap.set("n", "q", "<cmd>close<CR>", { buffer = buf, silent = true })
  vim.cmd("resize " .. math.min(#lines + 1, 20))
  return doc
end

return M
