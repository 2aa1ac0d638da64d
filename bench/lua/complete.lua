-- POST /api/v1/operations/{id}/complete for operations claimed beforehand: the file holds one
-- "operationId fencingToken" per line; thread t takes lines t, t+T, t+2T, ... If a thread runs
-- out it starts over (those would be cheaper "repeated" completes) and counts it in `exhausted`,
-- so the bench can reject the measurement.
-- args: <api key> <file> <threads>
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local headers, ops, i = nil, {}, 0

function init(args)
  headers = { ["Authorization"] = "Bearer " .. args[1], ["Content-Type"] = "application/json" }
  local nthreads, n = tonumber(args[3]), 0
  for line in io.lines(args[2]) do
    if n % nthreads == tid then
      local id, token = line:match("^(%S+) (%S+)$")
      table.insert(ops, { id, token })
    end
    n = n + 1
  end
end

function request()
  i = i + 1
  if i > #ops then
    i = 1
    exhausted = exhausted + 1
  end
  local op = ops[i]
  local body = '{"fencingToken":"' .. op[2] ..
    '","outcome":"succeeded","result":{"statusCode":201,"body":{"id":"ch_' .. op[2] .. '","amount":4200},"resourceId":"ch_' .. op[2] .. '"}}'
  return wrk.format("POST", "/api/v1/operations/" .. op[1] .. "/complete", headers, body)
end
