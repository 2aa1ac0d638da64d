-- POST of a claim's (or a complete's) headers and body to the bench-only framework-ceiling routes.
-- args: <static|dynamic|sql> (sql: the static path's claim body to echo-sql, which also sends `SELECT 1`)
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
    local target = args[1] == "sql" and "/api/bench-framework-ceiling/echo-sql" or "/api/bench-framework-ceiling/echo"
    req = wrk.format("POST", target, headers, body)
  end
end

function request()
  return req
end
