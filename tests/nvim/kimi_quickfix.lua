-- Neovim 0.7 as a real LSP client of kimi-lsp (driven headless by tests/nvim/test_nvim.py).
-- Attach, get KL101, apply the quick-fix (it edits requirements.txt), save, diagnostics clear.
-- Neovim 0.7 has no file watching: the server learns of the edit through didOpen/didChange/
-- didSave of requirements.txt, which is attached like any other file of the project.
local ROOT, OUT, PYTHON = os.getenv('KIMI_ROOT'), os.getenv('KIMI_OUT'), os.getenv('KIMI_PYTHON')
local out = assert(io.open(OUT, 'w'))
local function say(fmt, ...) out:write(string.format(fmt, ...) .. '\n'); out:flush() end
local function finish(code) out:close(); vim.cmd(code == 0 and 'qa!' or ('cq! ' .. code)) end

local ok, err = pcall(function()
  local id = vim.lsp.start_client({
    name = 'kimi-lsp',
    cmd = { PYTHON, '-m', 'kimi_lsp', 'serve' },
    root_dir = ROOT,
    settings = { ['kimi-lsp'] = { severity = { KL101 = 'warning' } } },
    -- what lspconfig does: Neovim 0.7 sends settings only when told to
    on_init = function(client)
      client.notify('workspace/didChangeConfiguration', { settings = client.config.settings })
    end,
  })
  assert(id, 'the client did not start')
  -- attach every file of the project, as lspconfig does by filetype (pin files included)
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    pattern = ROOT .. '/*',
    callback = function(args) vim.lsp.buf_attach_client(args.buf, id) end,
  })
  vim.cmd('edit ' .. ROOT .. '/k3.yaml')
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, id)

  local function warned()
    local ds = vim.diagnostic.get(buf)
    return #ds > 0 and ds[1].severity == vim.diagnostic.severity.WARN
  end
  assert(vim.wait(20000, warned, 50), 'no diagnostics with the configured severity')
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    say('diagnostic %d:%d %s %s severity %d', d.lnum, d.col, d.source or '?', d.code or d.user_data.lsp.code, d.severity)
  end

  local client = vim.lsp.get_client_by_id(id)
  local line = vim.diagnostic.get(buf)[1].lnum
  local res = client.request_sync('textDocument/codeAction', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = line, character = 0 }, ['end'] = { line = line, character = 0 } },
    context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(buf, line) },
  }, 10000, buf)
  assert(res and res.result, 'no code actions: ' .. vim.inspect(res))
  local bump
  for _, a in ipairs(res.result) do
    say('action %s%s', a.title, a.isPreferred and ' (preferred)' or '')
    if a.title:find('^Bump flashinfer%-python') then bump = a end
  end
  assert(bump, 'no bump action')
  local act = client.request_sync('codeAction/resolve', bump, 10000, buf).result
  assert(act and act.edit, 'resolve gave no edit')
  vim.lsp.util.apply_workspace_edit(act.edit, client.offset_encoding)
  vim.cmd('wall')
  local req = io.open(ROOT .. '/requirements.txt'):read('*a')
  say('requirements %s', (req:gsub('\n', '|')))

  local cleared = vim.wait(20000, function() return #vim.diagnostic.get(buf) == 0 end, 50)
  say('cleared %s', tostring(cleared))

  local hover = client.request_sync('textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 1, character = 2 },
  }, 10000, buf)
  say('hover %s', hover and hover.result and hover.result.contents.value:match('`%-%-dcp%-size`') or 'none')
  client.stop()
  vim.wait(5000, function() return client.is_stopped() end, 50)
end)
if not ok then say('error %s', tostring(err)); finish(3) else finish(0) end
