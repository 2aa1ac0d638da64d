-- POST of a claim's (or a complete's) headers and body to the bench-only framework-ceiling routes.
-- args: <static|dynamic>
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local req

function init(args)
  local headers = { ["Authorization"] = "Bearer tg_framework_ceiling", ["Content-Type"] = "application/json" }
  if args[1] == "dynamic" then
    local body = '{"fencingToken":"12345","outcome":"succeeded","result":{"statusCode":201,"body":{"id":"ch_12345","amount":4200},"resourceId":"ch_12345"}}'
    req = wrk.format("POST", "/api/bench-framework-ceiling/echo/op_AAAAAAAAAAAAAAAAAAAAAA/complete", headers, body)
  else
    headers["Idempotency-Key"] = "framework-ceiling-0001"
    local body = '{"tool":"bench.charge","args":{"to":"customer@example.com","amount":4200,"currency":"eur"}}'
    req = wrk.format("POST", "/api/bench-framework-ceiling/echo", headers, body)
  end
end

function request()
  return req
end
