-- Shared by every scenario script: thread ids, per-status counting, and one JSON line at the end.
-- wrk runs setup() in the main Lua state once per thread, init()/request()/response() in the
-- thread's own state, and done() in the main state again (it reads the threads' globals).
local threads = {}
local next_id = 0

function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

statuses = {}
exhausted = 0

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

local function json_statuses(all)
  local parts = {}
  for code, count in pairs(all) do
    table.insert(parts, string.format('"%d":%d', code, count))
  end
  return "{" .. table.concat(parts, ",") .. "}"
end

function done(summary, latency, requests)
  local all, wrapped = {}, 0
  for _, thread in ipairs(threads) do
    for code, count in pairs(thread:get("statuses")) do
      all[code] = (all[code] or 0) + count
    end
    wrapped = wrapped + (thread:get("exhausted") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"durationUs":%d,"bytes":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"meanUs":%.1f,"maxUs":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"statuses":%s,"exhausted":%d}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.mean, latency.max, e.connect, e.read, e.write, e.status, e.timeout, json_statuses(all), wrapped))
end
