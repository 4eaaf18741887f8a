-- Running the `agtail` command line. Every answer is `--json`: the CLI picks the running
-- daemon for its data dir (or works in-process), so the plugin never speaks HTTP itself.
local M = {}

local config = require("agtail.config")

--- The command line: the configured command, then ARGS (global options such as --json go
--- before the command, so that an argument after "--" stays an argument).
function M.argv(args, globals)
  local argv = vim.deepcopy(config.options.cmd)
  for _, a in ipairs(globals or {}) do
    table.insert(argv, a)
  end
  for _, a in ipairs(args) do
    table.insert(argv, a)
  end
  return argv
end

local function joined(chunks)
  return table.concat(chunks or {}, "\n")
end

--- Run `agtail ARGS --json` and wait for it. Returns the decoded document, or nil and a message.
function M.json(args)
  local argv = M.argv(args, { "--json" })
  local out, err, code = nil, nil, nil
  local ok, job = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      out = data
    end,
    on_stderr = function(_, data)
      err = data
    end,
    on_exit = function(_, c)
      code = c
    end,
  })
  if not ok or job <= 0 then
    return nil, "agtail: cannot run " .. argv[1] .. " (set it with require('agtail').setup({cmd = {...}}))"
  end
  local finished = vim.wait(config.options.timeout_ms, function()
    return code ~= nil and out ~= nil and err ~= nil
  end, 10)
  if not finished then
    pcall(vim.fn.jobstop, job)
    return nil, "agtail: " .. table.concat(args, " ") .. " did not answer in time"
  end
  if code ~= 0 then
    local message = vim.trim(joined(err))
    return nil, message ~= "" and message or ("agtail exited with " .. code)
  end
  local text = joined(out)
  local decoded_ok, doc = pcall(vim.json.decode, text)
  if not decoded_ok then
    return nil, "agtail: the answer is not JSON: " .. text:sub(1, 200)
  end
  return doc
end

--- Start `agtail ARGS` as a job whose stdout is JSON Lines; on_doc(doc) per line, on_exit(code, stderr).
function M.stream(args, on_doc, on_exit)
  local argv = M.argv(args)
  local rest = ""
  local errs = {}
  return vim.fn.jobstart(argv, {
    on_stdout = function(_, data)
      -- data[1] continues the last partial line; the last item is the start of the next one.
      data[1] = rest .. data[1]
      rest = table.remove(data)
      for _, line in ipairs(data) do
        if line ~= "" then
          local ok, doc = pcall(vim.json.decode, line)
          if ok and type(doc) == "table" then
            on_doc(doc)
          end
        end
      end
    end,
    on_stderr = function(_, data)
      for _, line in ipairs(data) do
        if line ~= "" then
          table.insert(errs, line)
        end
      end
    end,
    on_exit = function(_, code)
      if on_exit then
        on_exit(code, table.concat(errs, "\n"))
      end
    end,
  })
end

return M
