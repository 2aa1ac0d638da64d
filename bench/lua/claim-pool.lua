-- POST /api/v1/operations cycling over a pool of keys prepared beforehand (succeeded ones for
-- replays, ones with a live lease for 409s). Each thread starts at its own offset in the pool.
-- args: <api key> <tool> <key prefix> <pool size> <threads>
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local headers, body, prefix, size, i

function init(args)
  headers = { ["Authorization"] = "Bearer " .. args[1], ["Content-Type"] = "application/json" }
  body = '{"tool":"' .. args[2] .. '","args":{"to":"customer@example.com","amount":4200,"currency":"eur"}}'
  prefix = args[3]
  size = tonumber(args[4])
  i = math.floor(tid * size / tonumber(args[5]))
end

function request()
  i = (i + 1) % size
  headers["Idempotency-Key"] = prefix .. i
  return wrk.format("POST", "/api/v1/operations", headers, body)
end
