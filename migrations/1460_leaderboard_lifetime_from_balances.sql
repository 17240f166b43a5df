-- One home for a participant's lifetime points (issues 33 and 37): the
-- leaderboards module's outbox follower kept a copy of every balance's
-- lifetime in leaderboard_lifetime_points, one more upsert per award for every
-- tenant, board or none. Lifetime boards now rank points_balances itself
-- (lifetime, reached at last_earned_at: lifetime grows only by grants, each of
-- which sets it), through the points module's LIFETIME_POINTS_SQL; the copy
-- goes. Period points stay in leaderboard_period_points: a balance does not
-- know them.
DROP TABLE leaderboard_lifetime_points;
