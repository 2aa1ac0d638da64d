-- POST /api/v1/webhooks/{connectionId} with deliveries signed beforehand (Standard Webhooks): the
-- file holds one "webhook-id<TAB>webhook-timestamp<TAB>webhook-signature<TAB>body" per line;
-- thread t takes lines t, t+T, t+2T, ... Running out starts over (those would be cheaper
-- duplicates) and is counted in `exhausted`, so the bench can reject the measurement. For the
-- duplicate scenario the file is small on purpose and `cycle` says wrapping is expected.
-- args: <connection id> <file> <threads> [cycle]
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local path, events, i, cycle = nil, {}, 0, false

function init(args)
  path = "/api/v1/webhooks/" .. args[1]
  cycle = args[4] == "cycle"
  local nthreads, n = tonumber(args[3]), 0
  for line in io.lines(args[2]) do
    if n % nthreads == tid then
      local id, ts, sig, body = line:match("^([^\t]+)\t([^\t]+)\t([^\t]+)\t(.*)$")
      table.insert(events, { id, ts, sig, body })
    end
    n = n + 1
  end
end

function request()
  i = i + 1
  if i > #events then
    i = 1
    if not cycle then exhausted = exhausted + 1 end
  end
  local e = events[i]
  local headers = { ["Content-Type"] = "application/json", ["webhook-id"] = e[1], ["webhook-timestamp"] = e[2], ["webhook-signature"] = e[3] }
  return wrk.format("POST", path, headers, e[4])
end
