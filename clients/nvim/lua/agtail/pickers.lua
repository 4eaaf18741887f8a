-- The picker through Telescope or fzf-lua, when one of them is installed (:Agtail uses
-- vim.ui.select otherwise). Loaded only when chosen.
local M = {}

function M.telescope(sessions, format, on_choice)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  local actions = require("telescope.actions")
  local state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = "agtail sessions",
      finder = finders.new_table({
        results = sessions,
        entry_maker = function(s)
          local line = format(s)
          return { value = s, display = line, ordinal = line }
        end,
      }),
      sorter = conf.generic_sorter({}),
      attach_mappings = function(prompt, _)
        actions.select_default:replace(function()
          local entry = state.get_selected_entry()
          actions.close(prompt)
          if entry then
            on_choice(entry.value)
          end
        end)
        return true
      end,
    })
    :find()
end

function M.fzf_lua(sessions, format, on_choice)
  local by_line = {}
  local lines = {}
  for i, s in ipairs(sessions) do
    local line = i .. "  " .. format(s)
    by_line[line] = s
    table.insert(lines, line)
  end
  require("fzf-lua").fzf_exec(lines, {
    prompt = "agtail> ",
    actions = {
      ["default"] = function(selected)
        local s = selected and by_line[selected[1]]
        if s then
          on_choice(s)
        end
      end,
    },
  })
end

return M
