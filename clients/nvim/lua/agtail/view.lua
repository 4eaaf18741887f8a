-- Transcript buffers: filled from `agtail show --json` (or a live `agtail tail -f --json`),
-- read-only, filetype "agtail", folded per turn and per tool call.
local M = {}

local cli = require("agtail.cli")
local render = require("agtail.render")

--- Per buffer: {session=, facts={[lnum]=...}, levels={...}, last_seq=, job=}.
M.state = {}

local function set_lines(buf, first, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, first, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
  vim.api.nvim_buf_set_option(buf, "modified", false)
end

--- Append rendered events to BUF (after its header); refreshes the folds.
function M.append_events(buf, events)
  local st = M.state[buf]
  local lines = {}
  for _, ev in ipairs(events) do
    if st.last_seq == nil or (tonumber(ev.seq) or -1) > st.last_seq then
      local l, levels, facts = render.event(ev, st.session)
      for i = 1, #l do
        table.insert(lines, l[i])
        table.insert(st.levels, levels[i])
        st.facts[#st.levels] = facts[i]
      end
      st.last_seq = tonumber(ev.seq) or st.last_seq
    end
  end
  if #lines == 0 then
    return 0
  end
  set_lines(buf, #st.levels - #lines, lines)
  vim.api.nvim_buf_set_var(buf, "agtail_fold", st.levels)
  return #lines
end

local function window_options(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_set_option(win, "foldmethod", "expr")
    vim.api.nvim_win_set_option(win, "foldexpr", "get(b:agtail_fold, v:lnum - 1, 0)")
    vim.api.nvim_win_set_option(win, "foldlevel", 1)
    vim.api.nvim_win_set_option(win, "wrap", false)
  end
end

--- Make BUF a transcript of SESSION (header only; events come with append_events).
function M.setup_buffer(buf, session)
  local header = render.header(session)
  local levels = {}
  for _ = 1, #header do
    table.insert(levels, "0")
  end
  M.state[buf] = { session = session, facts = {}, levels = levels, last_seq = nil }
  vim.api.nvim_buf_set_var(buf, "agtail_session", session)
  vim.api.nvim_buf_set_var(buf, "agtail_fold", levels)
  vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
  vim.api.nvim_buf_set_option(buf, "swapfile", false)
  vim.api.nvim_buf_set_option(buf, "bufhidden", "hide")
  set_lines(buf, 0, header)
  vim.api.nvim_buf_set_option(buf, "readonly", true)
  vim.api.nvim_buf_set_option(buf, "filetype", "agtail")
  local opts = { buffer = buf, silent = true }
  vim.keymap.set("n", "gf", function()
    M.goto_file(buf)
  end, opts)
  vim.keymap.set("n", "<CR>", function()
    M.open_subagent(buf)
  end, opts)
  vim.keymap.set("n", "q", "<cmd>close<CR>", opts)
  vim.api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      window_options(buf)
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    callback = function()
      local st = M.state[buf]
      if st and st.job then
        pcall(vim.fn.jobstop, st.job)
      end
      M.state[buf] = nil
    end,
  })
  window_options(buf)
end

--- All of a session's events, page by page isn't needed: `agtail show` returns them all.
local function fetch(agent, id, collection)
  local args = { "show", agent .. ":" .. id }
  if collection then
    vim.list_extend(args, { "--collection", collection })
  end
  return cli.json(args)
end

--- BufReadCmd for agtail://[@COLL/]AGENT:ID.
function M.load_buffer(buf, name)
  local agent, id, collection = render.parse_bufname(name)
  if not agent then
    vim.notify("agtail: not a session name: " .. name, vim.log.levels.ERROR)
    return
  end
  local doc, err = fetch(agent, id, collection)
  if not doc then
    set_lines(buf, 0, { "# " .. err })
    vim.notify(err, vim.log.levels.ERROR)
    return
  end
  M.setup_buffer(buf, doc.session)
  M.append_events(buf, doc.events or {})
end

--- A window that may leave its buffer: the current one, or a new split when the current
--- buffer has unsaved changes that 'hidden' would not keep.
local function free_window()
  if vim.bo.modified and not vim.o.hidden then
    vim.cmd("split")
  end
end

--- Open SESSION (a session document, or "AGENT:ID") in the current window.
function M.open(session)
  free_window()
  local name
  if type(session) == "table" then
    name = render.bufname(session)
  else
    name = "agtail://" .. session
  end
  vim.cmd("edit " .. vim.fn.fnameescape(name))
  return vim.api.nvim_get_current_buf()
end

--- The session shown in BUF (nil when BUF is not a transcript).
function M.session(buf)
  local st = M.state[buf or vim.api.nvim_get_current_buf()]
  return st and st.session or nil
end

--- gf: the path under the cursor, relative paths from the session's cwd.
function M.goto_file(buf)
  local st = M.state[buf]
  local path = vim.fn.expand("<cfile>")
  if path == "" then
    return
  end
  if path:sub(1, 1) ~= "/" and path:sub(1, 1) ~= "~" and st and type(st.session.cwd) == "string" then
    path = st.session.cwd .. "/" .. path
  end
  path = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  if vim.fn.filereadable(path) == 0 and vim.fn.isdirectory(path) == 0 then
    vim.notify("agtail: no such file: " .. path, vim.log.levels.WARN)
    return
  end
  vim.cmd("edit " .. vim.fn.fnameescape(path))
end

--- <CR> on a subagent line opens the subagent's session; elsewhere it toggles the fold.
function M.open_subagent(buf)
  local st = M.state[buf]
  local fact = st and st.facts[vim.api.nvim_win_get_cursor(0)[1]]
  if fact and fact.subagent then
    M.open(fact.subagent)
  elseif vim.fn.foldlevel(".") > 0 then
    vim.cmd("normal! za")
  end
end

--- A live buffer for SESSION: its last events, then each new one as it is written.
function M.follow(session)
  free_window()
  vim.cmd("enew")
  local buf = vim.api.nvim_get_current_buf()
  pcall(vim.api.nvim_buf_set_name, buf, "agtail-follow://" .. render.ref(session))
  M.setup_buffer(buf, session)
  local st = M.state[buf]
  st.job = cli.stream({ "tail", "-f", "--json", "-n", "200", render.ref(session) }, function(ev)
    if vim.api.nvim_buf_is_valid(buf) and M.state[buf] then
      M.append_events(buf, { ev })
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(buf), 0 })
      end
    end
  end, function(code, stderr)
    if code ~= 0 and code ~= 143 and vim.api.nvim_buf_is_valid(buf) then
      vim.notify("agtail tail -f stopped: " .. (stderr ~= "" and stderr or ("exit " .. code)), vim.log.levels.WARN)
    end
  end)
  vim.api.nvim_buf_set_var(buf, "agtail_follow_job", st.job)
  return buf
end

return M
