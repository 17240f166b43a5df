-- Adds one job per payload through a single graphile_worker.add_jobs call, and none when there is
-- no payload. Statements that add a job per row (one per delivery) used add_job per row; each
-- add_job call runs add_jobs' key-clearing UPDATE, which scans the job table, so adding n jobs to a
-- queue holding m cost n scans of m rows. `p_queues` (optional) names each job's queue.
CREATE FUNCTION enqueue_jobs(p_task text, p_payloads json[], p_max_attempts integer, p_queues text[] DEFAULT NULL)
  RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  v_added integer;
BEGIN
  IF coalesce(cardinality(p_payloads), 0) = 0 THEN
    RETURN 0;
  END IF;
  SELECT count(*) INTO v_added
  FROM graphile_worker.add_jobs(ARRAY(
    SELECT ROW(p_task, j.payload, j.queue, NULL, p_max_attempts, NULL, NULL, NULL)::graphile_worker.job_spec
    FROM unnest(p_payloads, p_queues) WITH ORDINALITY AS j (payload, queue, n)
    ORDER BY j.n
  ));
  RETURN v_added;
END $$;
