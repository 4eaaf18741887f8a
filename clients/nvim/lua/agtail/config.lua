-- Options, set with require('agtail').setup({...}).
local M = {}

M.defaults = {
  --- The agtail command and any global options (e.g. {"agtail", "--data-dir", "/path"}).
  cmd = { "agtail" },
  --- "auto" (Telescope, else fzf-lua, else vim.ui.select), "telescope", "fzf-lua" or "select".
  picker = "auto",
  --- How many sessions the picker lists, and how many hits :AgtailSearch asks for.
  limit = 50,
  search_limit = 100,
  --- Tool output lines shown under a tool call (the rest is summed up in one line).
  tool_output_lines = 40,
  --- How long a command may take before the plugin gives up (milliseconds).
  timeout_ms = 30000,
}

M.options = vim.deepcopy(M.defaults)

function M.setup(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  if opts and opts.cmd then
    M.options.cmd = vim.deepcopy(opts.cmd) -- a list is replaced, not merged index by index
  end
  if type(M.options.cmd) == "string" then
    M.options.cmd = { M.options.cmd }
  end
end

return M
