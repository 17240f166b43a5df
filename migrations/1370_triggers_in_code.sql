-- The leaderboard totals and the challenge re-evaluation jobs that follow
-- points.awarded.v1 and badge.earned.v1 are written by their modules, in the
-- transaction of the events (`outboxFollower` of src/modules/leaderboards and
-- src/modules/challenges, run by src/platform/outbox.ts and by the points
-- module's grant statement). The statement triggers of migration 1120 that did
-- it where no module showed it go.
DROP TRIGGER leaderboard_points_awarded ON outbox_events;
DROP TRIGGER challenge_progression_event ON outbox_events;
DROP FUNCTION leaderboard_track_points_awarded();
DROP FUNCTION challenge_queue_reevaluation();

-- The counters of finished webhook deliveries (migration 1010) are added by the
-- analytics module's `countFinishedDeliveries`, which the webhooks module calls
-- in the transaction that records each outcome. Deliveries are only ever
-- inserted PENDING, so the insert trigger never counted anything.
DROP TRIGGER analytics_webhook_delivery_finished ON webhook_deliveries;
DROP TRIGGER analytics_webhook_delivery_inserted_finished ON webhook_deliveries;
DROP FUNCTION analytics_count_webhook_delivery();
