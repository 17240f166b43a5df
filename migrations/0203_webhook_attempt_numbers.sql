-- Every attempt of a delivery gets its own number, allocated on the delivery row when the attempt
-- is claimed. Until now the log numbered an attempt by the attempts finished so far, so an attempt
-- cut short by a crash and the attempt that repeated it carried the same number, told apart only
-- by started_at in the key; when both started in the same millisecond, recording the repeat's
-- outcome failed on the key after its POST had gone out.

-- The number of the latest attempt claimed (cut short or not); `attempts` still counts the
-- attempts that finished with an outcome, which is what the retry budget spends.
ALTER TABLE webhook_deliveries
  ADD COLUMN attempts_started integer NOT NULL DEFAULT 0 CHECK (attempts_started >= 0),
  -- When the attempt in flight was claimed: the start the log gives it should it be cut short.
  ADD COLUMN attempt_started_at timestamptz;

ALTER TABLE webhook_delivery_attempts DROP CONSTRAINT webhook_delivery_attempts_pkey;

-- Existing logs are renumbered 1, 2, 3… in the order they were shown.
UPDATE webhook_delivery_attempts a
SET attempt = r.n
FROM (
  SELECT tenant_id, delivery_id, attempt, started_at,
         row_number() OVER (PARTITION BY tenant_id, delivery_id ORDER BY started_at, attempt) AS n
  FROM webhook_delivery_attempts
) r
WHERE a.tenant_id = r.tenant_id AND a.delivery_id = r.delivery_id AND a.attempt = r.attempt AND a.started_at = r.started_at
  AND a.attempt <> r.n;

ALTER TABLE webhook_delivery_attempts ADD PRIMARY KEY (tenant_id, delivery_id, attempt);

-- A delivery's counter starts after its logged attempts; an attempt in flight takes the next number.
UPDATE webhook_deliveries w
SET attempts_started = coalesce((SELECT max(a.attempt) FROM webhook_delivery_attempts a WHERE a.tenant_id = w.tenant_id AND a.delivery_id = w.id), 0)
                       + CASE WHEN w.status = 'DELIVERING' THEN 1 ELSE 0 END,
    attempt_started_at = CASE WHEN w.status = 'DELIVERING' THEN w.updated_at END
WHERE w.status = 'DELIVERING'
   OR EXISTS (SELECT 1 FROM webhook_delivery_attempts a WHERE a.tenant_id = w.tenant_id AND a.delivery_id = w.id);
