-- GET /api/live: the framework ceiling (touches nothing).
dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

local req

function init(args)
  req = wrk.format("GET", "/api/live")
end

function request()
  return req
end
