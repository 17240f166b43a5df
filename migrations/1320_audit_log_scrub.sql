-- Review finding 1 and 3 (issue 32): audit entries written before snapshots were kept through their
-- schema's allowlist (platform/privacy.ts `auditSnapshot`) could hold credentials (the invitation
-- link of `POST /admin/users`, whose token let anyone who read the log accept an owner invitation)
-- and personal custom field values (redaction went by key name). This scrubs the entries already
-- written: credentials are removed, standard personal fields and contest fraud signals read
-- "[redacted]", and every custom field value reads "[redacted]" (which custom fields were
-- personal when the entry was written is not known; the scrub keeps none). The function exists
-- only for this migration and is dropped at its end.
CREATE FUNCTION audit_scrub_1320(value jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  result jsonb;
  k text;
  v jsonb;
BEGIN
  IF value IS NULL THEN
    RETURN NULL;
  END IF;
  IF jsonb_typeof(value) = 'array' THEN
    RETURN (SELECT coalesce(jsonb_agg(audit_scrub_1320(e) ORDER BY i), '[]'::jsonb) FROM jsonb_array_elements(value) WITH ORDINALITY AS a (e, i));
  END IF;
  IF jsonb_typeof(value) <> 'object' THEN
    RETURN value;
  END IF;
  result := '{}'::jsonb;
  FOR k, v IN SELECT * FROM jsonb_each(value) LOOP
    IF k IN ('invite_url', 'key', 'api_key', 'codes', 'code_values', 'csrf_token') OR k ~* '(secret|password|token|signing)' THEN
      CONTINUE;
    ELSIF k IN ('email', 'first_name', 'last_name', 'full_name', 'mobile_number', 'date_of_birth', 'gender', 'payment_method', 'device_fingerprint', 'prize_code', 'value') THEN
      result := result || jsonb_build_object(k, CASE WHEN v = 'null'::jsonb THEN v ELSE to_jsonb('[redacted]'::text) END);
    ELSIF k = 'custom' AND jsonb_typeof(v) = 'object' THEN
      result := result || jsonb_build_object(k, (
        SELECT coalesce(jsonb_object_agg(ck, CASE WHEN cv = 'null'::jsonb THEN cv ELSE to_jsonb('[redacted]'::text) END), '{}'::jsonb)
        FROM jsonb_each(v) AS c (ck, cv)));
    ELSE
      result := result || jsonb_build_object(k, audit_scrub_1320(v));
    END IF;
  END LOOP;
  RETURN result;
END
$$;

UPDATE audit_log
SET before = audit_scrub_1320(before), after = audit_scrub_1320(after), details = audit_scrub_1320(details)
WHERE before IS NOT NULL OR after IS NOT NULL OR details IS NOT NULL;

DROP FUNCTION audit_scrub_1320(jsonb);
