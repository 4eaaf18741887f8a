-- agtail.nvim: read, search, follow and resume your coding agents' sessions.
-- Commands only; everything else loads on first use (lua/agtail/).
if vim.g.loaded_agtail then
  return
end
vim.g.loaded_agtail = true

local function agtail()
  return require("agtail")
end

vim.api.nvim_create_user_command("Agtail", function(o)
  agtail().pick(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "agtail: pick a recent session (or open AGENT:ID)" })

vim.api.nvim_create_user_command("AgtailSearch", function(o)
  agtail().search(o.args)
end, { nargs = "+", desc = "agtail: search every session into the quickfix list" })

vim.api.nvim_create_user_command("AgtailFollow", function(o)
  agtail().follow(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "agtail: follow the newest active session (or AGENT:ID) live" })

vim.api.nvim_create_user_command("AgtailResume", function(o)
  agtail().resume(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "agtail: resume this session (or AGENT:ID) in a terminal" })

vim.api.nvim_create_user_command("AgtailStats", function(o)
  agtail().stats(o.args ~= "" and o.args or nil)
end, { nargs = "?", desc = "agtail: today's tokens and cost (or since DATE/AGE)" })

local function organize()
  return require("agtail.organize")
end

vim.api.nvim_create_user_command("AgtailLabel", function(o)
  organize().label(o.fargs, false)
end, { nargs = "+", desc = "agtail: label this session (or AGENT:ID first): KEY or KEY=VALUE" })

vim.api.nvim_create_user_command("AgtailUnlabel", function(o)
  organize().label(o.fargs, true)
end, { nargs = "+", desc = "agtail: take labels off this session (or AGENT:ID first)" })

for _, command in ipairs({ "star", "unstar", "hide", "unhide" }) do
  vim.api.nvim_create_user_command("Agtail" .. command:sub(1, 1):upper() .. command:sub(2), function(o)
    organize().mark(command, o.fargs)
  end, { nargs = "?", desc = "agtail: " .. command .. " this session (or AGENT:ID)" })
end

vim.api.nvim_create_user_command("AgtailTitle", function(o)
  organize().title(o.args)
end, { nargs = "?", desc = "agtail: your title for this session (none: the agent's again)" })

local group = vim.api.nvim_create_augroup("agtail", { clear = true })
vim.api.nvim_create_autocmd("BufReadCmd", {
  group = group,
  pattern = "agtail://*",
  callback = function(ev)
    agtail().load_buffer(ev.buf, ev.match)
  end,
})

vim.api.nvim_create_user_command("AgtailBlame", function()
  require("agtail.provenance").blame()
end, { desc = "agtail: the session and prompt that last wrote the line under the cursor (gs opens it)" })

vim.api.nvim_create_user_command("AgtailHistory", function(o)
  require("agtail.provenance").history(o.args ~= "" and tonumber(o.args) or nil)
end, { nargs = "?", desc = "agtail: every recorded change of this file, newest first" })
