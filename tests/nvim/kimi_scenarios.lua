-- Neovim (0.7 or 0.11) as a real LSP client of kimi-lsp, driven headless by tests/nvim/test_nvim.py.
-- KIMI_CASE picks the scenario; each writes what it saw to KIMI_OUT, one fact a line:
--   stale-pin   requirements.txt is rewritten on disk behind the editor's back (a `git pull`): no
--               buffer holds it, so the client sends no didOpen/didChange/didChangeWatchedFiles;
--               the server's disk poll must clear the KL101 within its window.
--   duplicate   every diagnostic is shown exactly once (Neovim 0.10/0.11 pull diagnostics but
--               cannot be told to pull again: a server that pushed too would show each twice).
--   completion  completion after `tp-` in a half-written config with a typo on another line.
local ROOT, OUT, PYTHON, CASE = os.getenv('KIMI_ROOT'), os.getenv('KIMI_OUT'), os.getenv('KIMI_PYTHON'), os.getenv('KIMI_CASE')
local out = assert(io.open(OUT, 'w'))
local function say(fmt, ...) out:write(string.format(fmt, ...) .. '\n'); out:flush() end
local function finish(code) out:close(); vim.cmd(code == 0 and 'qa!' or ('cq! ' .. code)) end
local function now_ms() return vim.loop.hrtime() / 1e6 end

local function start()
  local id = vim.lsp.start_client({ name = 'kimi-lsp', cmd = { PYTHON, '-m', 'kimi_lsp', 'serve' }, root_dir = ROOT })
  assert(id, 'the client did not start')
  return id, vim.lsp.get_client_by_id(id)
end

local function open(name, id)
  vim.cmd('edit ' .. ROOT .. '/' .. name)
  local buf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(buf, id)
  return buf
end

local function codes(buf)
  local seen = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    seen[#seen + 1] = string.format('%s@%d', d.code or (d.user_data and d.user_data.lsp.code) or '?', d.lnum)
  end
  table.sort(seen)
  return table.concat(seen, ',')
end

local ok, err = pcall(function()
  local caps = vim.lsp.protocol.make_client_capabilities()
  local watched = caps.workspace and caps.workspace.didChangeWatchedFiles
  say('version %s', tostring(vim.version().major) .. '.' .. tostring(vim.version().minor))
  say('watches %s', tostring(watched ~= nil and watched.dynamicRegistration == true))
  say('pulls %s', tostring(caps.textDocument.diagnostic ~= nil))
  local id, client = start()

  if CASE == 'stale-pin' then
    local buf = open('k3.yaml', id)
    assert(vim.wait(20000, function() return codes(buf):find('KL101') ~= nil end, 20), 'no KL101')
    say('before %s', codes(buf))
    vim.wait(300)  -- settle: the first lint's publish is in
    local f = assert(io.open(ROOT .. '/requirements.txt', 'w'))  -- `git pull`: behind the editor's back
    f:write('flashinfer-python==0.6.17\n'); f:close()
    local t0 = now_ms()
    local cleared = vim.wait(15000, function() return codes(buf):find('KL101') == nil end, 20)
    say('cleared %s after %d ms', tostring(cleared), math.floor(now_ms() - t0))
    say('after %s', codes(buf))
    say('buffers %d', #vim.api.nvim_list_bufs())

  elseif CASE == 'duplicate' then
    local buf = open('k3.yaml', id)
    assert(vim.wait(20000, function() return #vim.diagnostic.get(buf) >= 2 end, 20), 'no diagnostics')
    vim.wait(1500)  -- a late pull or a second push would land here
    say('first %s', codes(buf))
    -- an edit: dcp-size 8 -> 4 (still KL101, the typo stays)
    vim.api.nvim_buf_set_lines(buf, 1, 2, false, { 'dcp-size: 4' })
    assert(vim.wait(20000, function()
      for _, d in ipairs(vim.diagnostic.get(buf)) do if d.message:find('dcp%-size 4') then return true end end
      return false
    end, 20), 'the edit was not linted')
    vim.wait(1500)
    say('edited %s', codes(buf))

  elseif CASE == 'completion' then
    local buf = open('half.yaml', id)
    -- the server answers in order: didOpen is handled before this request
    local last = vim.api.nvim_buf_line_count(buf) - 1
    local line = vim.api.nvim_buf_get_lines(buf, last, last + 1, false)[1]
    say('line %s', line)
    local res = client.request_sync('textDocument/completion', {
      textDocument = { uri = vim.uri_from_bufnr(buf) },
      position = { line = last, character = #line },
      context = { triggerKind = 2, triggerCharacter = '-' },
    }, 10000, buf)
    assert(res and res.result, 'no completion: ' .. vim.inspect(res))
    local items = res.result.items or res.result
    local labels = {}
    for _, it in ipairs(items) do labels[#labels + 1] = it.label end
    table.sort(labels)
    say('items %d', #labels)
    say('labels %s', table.concat(labels, ','))
  else
    error('unknown KIMI_CASE ' .. tostring(CASE))
  end
  client.stop()
  vim.wait(5000, function() return client.is_stopped() end, 50)
end)
if not ok then say('error %s', tostring(err)); finish(3) else finish(0) end
