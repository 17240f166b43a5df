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

/**
 * Every grant of the tenant `$1`, as the ledger keeps it: `participant_id`,
 * `amount` and `at`, one row per positive entry. Only a grant writes a
 * positive entry, and each writes one points.awarded.v1 of that amount at
 * that time: the leaderboards module fills its period totals from this when
 * a tenant's first period board starts keeping them.
 */
export const GRANTS_SQL = `SELECT participant_id, delta AS amount, created_at AS at
     FROM points_ledger WHERE tenant_id = $1 AND delta > 0`;
