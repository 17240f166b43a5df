/**
 * Lifetime points as a ranking reads them (the leaderboards module's lifetime
 * boards): one row per participant with points, `participant_id`, `score`
 * and `reached_at`, for the tenant `$1`. The score is the balance's lifetime,
 * the one home of that figure; it grows only by grants, and every grant sets
 * `last_earned_at`, so the participant's last award is when the lifetime
 * reached its value (a balance written otherwise, a fixture's, has no award
 * time and its last update stands in).
 */
export const LIFETIME_POINTS_SQL = `SELECT participant_id, lifetime AS score, coalesce(last_earned_at, updated_at) AS reached_at
     FROM points_balances WHERE tenant_id = $1 AND lifetime > 0`;
