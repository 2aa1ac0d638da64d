-- POST /api/v1/operations with a NEW Idempotency-Key on every request: run prefix, thread id, counter.
-- args: <api key> <tool> <run prefix>
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local headers, body, prefix
local counter = 0

function init(args)
  headers = { ["Authorization"] = "Bearer " .. args[1], ["Content-Type"] = "application/json" }
  body = '{"tool":"' .. args[2] .. '","args":{"to":"customer@example.com","amount":4200,"currency":"eur"}}'
  prefix = args[3] .. "-t" .. tid .. "-"
end

function request()
  counter = counter + 1
  headers["Idempotency-Key"] = prefix .. counter
  return wrk.format("POST", "/api/v1/operations", headers, body)
end
