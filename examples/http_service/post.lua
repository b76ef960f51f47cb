-- SPDX-License-Identifier: MIT
-- wrk script of load.sh: POST /transactions with 1000 different small JSON bodies (made once,
-- so wrk's own CPU per request stays low), no X-Request-ID (the service makes the ids), and at
-- the end two machine-readable lines: the latency percentiles wrk measured, and its latency
-- histogram (each distinct latency in µs and how many requests took it), which load.sh merges
-- over the rounds.
local requests = {}
local next_request = 1

function init(args)
   for i = 1, 1000 do
      local body = string.format('{"account":"acc-%04d","amount":%d.%02d,"currency":"EUR","merchant":"merchant-%02d"}',
                                 i, i % 500 + 1, i % 100, i % 37)
      requests[i] = wrk.format("POST", "/transactions", {["Content-Type"] = "application/json"}, body)
   end
end

function request()
   local r = requests[next_request]
   next_request = next_request % #requests + 1
   return r
end

function done(summary, latency, _)
   local e = summary.errors
   io.write(string.format("WRK_RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d " ..
                          "errors=%d\n", summary.requests, summary.duration, latency:percentile(50),
                          latency:percentile(99), latency:percentile(99.9), latency.max,
                          e.connect + e.read + e.write + e.status + e.timeout))
   local buckets = {}
   for i = 1, #latency do
      local value, count = latency(i)
      buckets[i] = string.format("%d:%d", value, count)
   end
   io.write("WRK_LATENCY ", table.concat(buckets, " "), "\n")
end
