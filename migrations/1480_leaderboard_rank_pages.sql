-- A ranking is kept in pages of ranks instead of a row per participant.
--
-- A rebuild of leaderboard_rankings wrote a row per ranked participant and two
-- B-tree entries for each, one of them (participant) in random order, then
-- deleted the previous generation row by row: 12-16 s of a core for 1M
-- participants, every refresh (docs/performance/leaderboards.md). Pages of
-- 100 ranks, and a look-up of each participant's rank in buckets of about as
-- many, write two rows per hundred participants: 2-3 s for the same ranking.
--
-- leaderboard_rank_pages: page n holds ranks n * 100 + 1 to (n + 1) * 100,
-- participant_ids[i] ranked n * 100 + i with scores[i].
--
-- A page of 100 short ids is about 2 KB, just past the size from which
-- PostgreSQL compresses a row's values or moves them out of the row (TOAST).
-- Both tables keep rows of up to 8 KB whole instead: a rebuild of 1M took
-- 2.0-2.8 s against 2.9-3.5 s (no compression tried on 20,000 rows), and a
-- read decompresses nothing.
CREATE TABLE leaderboard_rank_pages (
  tenant_id uuid NOT NULL,
  leaderboard_id uuid NOT NULL,
  period_start date NOT NULL,
  generation bigint NOT NULL,
  page integer NOT NULL,
  participant_ids text[] NOT NULL,
  scores bigint[] NOT NULL,
  PRIMARY KEY (tenant_id, leaderboard_id, period_start, generation, page),
  FOREIGN KEY (tenant_id, leaderboard_id) REFERENCES leaderboards (tenant_id, id) ON DELETE CASCADE
) WITH (toast_tuple_target = 8160);
CALL enable_tenant_rls('leaderboard_rank_pages');

-- leaderboard_rank_lookup: each ranked participant's rank, in the bucket its id
-- hashes to (leaderboards/store.ts says how) among the snapshot's
-- lookup_buckets (as many as the ranking has pages): ranks[i] is the rank of
-- participant_ids[i].
CREATE TABLE leaderboard_rank_lookup (
  tenant_id uuid NOT NULL,
  leaderboard_id uuid NOT NULL,
  period_start date NOT NULL,
  generation bigint NOT NULL,
  bucket integer NOT NULL,
  participant_ids text[] NOT NULL,
  ranks integer[] NOT NULL,
  PRIMARY KEY (tenant_id, leaderboard_id, period_start, generation, bucket),
  FOREIGN KEY (tenant_id, leaderboard_id) REFERENCES leaderboards (tenant_id, id) ON DELETE CASCADE
) WITH (toast_tuple_target = 8160);
CALL enable_tenant_rls('leaderboard_rank_lookup');

ALTER TABLE leaderboard_snapshots ADD COLUMN lookup_buckets integer NOT NULL DEFAULT 1;
UPDATE leaderboard_snapshots SET lookup_buckets = greatest(1, ceil(total_participants / 100.0))::int;

-- The rankings kept so far, paged as store.ts pages them when this was written
-- (a period's final ranking is never rebuilt, so it is carried over).
INSERT INTO leaderboard_rank_pages (tenant_id, leaderboard_id, period_start, generation, page, participant_ids, scores)
SELECT r.tenant_id, r.leaderboard_id, r.period_start, r.generation, (r.rank - 1) / 100,
       array_agg(r.participant_id ORDER BY r.rank), array_agg(r.score ORDER BY r.rank)
FROM leaderboard_rankings r
JOIN leaderboard_snapshots s USING (tenant_id, leaderboard_id, period_start, generation)
GROUP BY 1, 2, 3, 4, 5;

INSERT INTO leaderboard_rank_lookup (tenant_id, leaderboard_id, period_start, generation, bucket, participant_ids, ranks)
SELECT r.tenant_id, r.leaderboard_id, r.period_start, r.generation,
       ((hashtextextended(r.participant_id, 0) & 9223372036854775807) % s.lookup_buckets)::int,
       array_agg(r.participant_id), array_agg(r.rank)
FROM leaderboard_rankings r
JOIN leaderboard_snapshots s USING (tenant_id, leaderboard_id, period_start, generation)
GROUP BY 1, 2, 3, 4, 5;

DROP TABLE leaderboard_rankings;
