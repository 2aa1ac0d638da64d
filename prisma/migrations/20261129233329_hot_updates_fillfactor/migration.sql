-- Room on each page for HOT (heap-only tuple) updates: an UPDATE that changes no indexed
-- column, and finds space on the row's own page, writes no index entries at all.
-- - attempt: complete and takeover set ended_at/outcome/error/provider, none indexed.
-- - operation: replays, 409 counters and heartbeats touch only unindexed columns.
-- Only pages written from now on keep the space; existing rows are unaffected.
ALTER TABLE "operation" SET (fillfactor = 85);
ALTER TABLE "attempt" SET (fillfactor = 80);
