-- Participants and privacy: the standard profile fields, custom field
-- definitions and values, the personal-data access log, erasure evidence, and
-- the erasure function that reaches every table holding a participant's rows.
-- Formats are validated in the service (src/modules/participants/fields.ts);
-- the checks here are the last line of defence on lengths and shapes.

ALTER TABLE participants
  ADD COLUMN email text CHECK (char_length(email) <= 254 AND position('@' in email) > 1),
  -- SHA-256 (hex) of the trimmed, lower-cased email: lets callers without read:pii find a participant.
  ADD COLUMN email_hash text CHECK (email_hash ~ '^[0-9a-f]{64}$'),
  ADD COLUMN first_name text CHECK (char_length(first_name) BETWEEN 1 AND 100),
  ADD COLUMN last_name text CHECK (char_length(last_name) BETWEEN 1 AND 100),
  ADD COLUMN full_name text CHECK (char_length(full_name) BETWEEN 1 AND 200),
  -- E.164: a plus sign and 8 to 15 digits.
  ADD COLUMN mobile_number text CHECK (mobile_number ~ '^\+[1-9][0-9]{7,14}$'),
  -- ISO 3166-1 alpha-2, upper case.
  ADD COLUMN country_code text CHECK (country_code ~ '^[A-Z]{2}$'),
  ADD COLUMN date_of_birth date,
  ADD COLUMN gender text CHECK (gender IN ('female', 'male', 'non_binary', 'other', 'prefer_not_to_say')),
  ADD COLUMN city text CHECK (char_length(city) BETWEEN 1 AND 100),
  ADD COLUMN postal_code text CHECK (char_length(postal_code) BETWEEN 1 AND 12),
  ADD COLUMN external_id text CHECK (char_length(external_id) BETWEEN 1 AND 128),
  -- When each standard field was last observed: out-of-order observations never overwrite newer ones.
  ADD COLUMN profile_observed_at jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Set once the participant is anonymized: personal data is gone and never comes back.
  ADD COLUMN anonymized_at timestamptz;

CREATE INDEX participants_listing ON participants (tenant_id, created_at, participant_id);
CREATE INDEX participants_external_id ON participants (tenant_id, external_id) WHERE external_id IS NOT NULL;
CREATE INDEX participants_email_hash ON participants (tenant_id, email_hash) WHERE email_hash IS NOT NULL;

-- Custom profile fields a tenant defines (preference flags, behavioural attributes).
CREATE TABLE participant_custom_fields (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  key text NOT NULL CHECK (key ~ '^[a-z][a-z0-9_]{0,62}$'),
  type text NOT NULL CHECK (type IN ('string', 'number', 'boolean', 'date')),
  -- Personal data: masked on read without read:pii, logged on full reads, removed by anonymization.
  personal boolean NOT NULL,
  description text CHECK (char_length(description) <= 500),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CALL enable_tenant_rls('participant_custom_fields');

CREATE TABLE participant_custom_values (
  tenant_id uuid NOT NULL,
  participant_id text NOT NULL,
  key text NOT NULL,
  value jsonb NOT NULL,
  observed_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, participant_id, key),
  FOREIGN KEY (tenant_id, participant_id) REFERENCES participants (tenant_id, participant_id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, key) REFERENCES participant_custom_fields (tenant_id, key) ON DELETE CASCADE
);
CREATE INDEX participant_custom_values_lookup ON participant_custom_values (tenant_id, key, value);
CALL enable_tenant_rls('participant_custom_values');

-- One row per full (unmasked) read of personal data. Append-only for the
-- application; the retention job deletes rows past retention as the owner.
-- participant_id is set when one participant was read; a bulk read of several
-- leaves it NULL and lists them all in participant_ids.
CREATE TABLE pii_access_log (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  actor_type text NOT NULL CHECK (actor_type IN ('admin', 'system', 'webhook')),
  actor_id text NOT NULL CHECK (char_length(actor_id) BETWEEN 1 AND 200),
  participant_id text,
  participant_ids text[] NOT NULL,
  fields_accessed jsonb NOT NULL CHECK (jsonb_typeof(fields_accessed) = 'array'),
  row_count integer NOT NULL CHECK (row_count >= 1),
  export_format text CHECK (export_format IN ('json', 'csv')),
  ip_address inet,
  occurred_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX pii_access_log_time ON pii_access_log (occurred_at);
CREATE INDEX pii_access_log_participant ON pii_access_log (tenant_id, participant_id, occurred_at);
CALL enable_tenant_rls('pii_access_log');
REVOKE UPDATE, DELETE, TRUNCATE ON pii_access_log FROM loyalty_app;

-- Audit evidence of each erasure: what was done, by whom, and how many rows of
-- each table it touched. Keeps only the participant id, never personal data.
CREATE TABLE participant_erasures (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  participant_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('anonymized', 'deleted')),
  actor_type text NOT NULL,
  actor_id text NOT NULL,
  performed_at timestamptz NOT NULL,
  row_counts jsonb NOT NULL,
  rows_kept jsonb NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX participant_erasures_participant ON participant_erasures (tenant_id, participant_id, performed_at DESC);
CALL enable_tenant_rls('participant_erasures');
REVOKE UPDATE, DELETE, TRUNCATE ON participant_erasures FROM loyalty_app;

-- Escapes a literal for use inside a regular expression.
CREATE FUNCTION privacy_regex_literal(p_value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT regexp_replace(p_value, '([\\.\^\$\*\+\?\(\)\[\]\{\}\|\-])', '\\\1', 'g') $$;

-- A text value with every personal value removed: a value that IS personal
-- becomes p_whole (NULL or a label); a personal value of at least
-- p_substring_min characters inside longer text is replaced by [redacted].
CREATE FUNCTION privacy_scrub_text(p_text text, p_values text[], p_whole text, p_substring_min integer) RETURNS text
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  v text;
  result text := p_text;
BEGIN
  IF p_text IS NULL OR p_values IS NULL THEN RETURN p_text; END IF;
  IF lower(btrim(p_text)) = ANY (SELECT lower(x) FROM unnest(p_values) x) THEN RETURN p_whole; END IF;
  FOREACH v IN ARRAY p_values LOOP
    IF char_length(v) >= p_substring_min AND position(lower(v) in lower(result)) > 0 THEN
      result := regexp_replace(result, privacy_regex_literal(v), '[redacted]', 'gi');
    END IF;
  END LOOP;
  RETURN result;
END $$;

-- A JSON document with personal data removed: members named after personal
-- fields become null, and string values are scrubbed like text.
CREATE FUNCTION privacy_scrub_jsonb(p_doc jsonb, p_values text[], p_keys text[], p_substring_min integer) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  result jsonb;
BEGIN
  IF p_doc IS NULL THEN RETURN NULL; END IF;
  CASE jsonb_typeof(p_doc)
    WHEN 'object' THEN
      SELECT coalesce(jsonb_object_agg(key,
               CASE WHEN lower(key) = ANY (p_keys) THEN 'null'::jsonb
                    ELSE privacy_scrub_jsonb(value, p_values, p_keys, p_substring_min) END), '{}'::jsonb)
        INTO result FROM jsonb_each(p_doc);
      RETURN result;
    WHEN 'array' THEN
      SELECT coalesce(jsonb_agg(privacy_scrub_jsonb(value, p_values, p_keys, p_substring_min) ORDER BY ordinality), '[]'::jsonb)
        INTO result FROM jsonb_array_elements(p_doc) WITH ORDINALITY;
      RETURN result;
    WHEN 'string' THEN
      RETURN coalesce(to_jsonb(privacy_scrub_text(p_doc #>> '{}', p_values, NULL, p_substring_min)), 'null'::jsonb);
    ELSE
      RETURN p_doc;
  END CASE;
END $$;

-- Where a participant's rows live: every (table, column) that references
-- participants through a foreign key, and every column named participant_id
-- of a table with a tenant_id, outside the privacy module's own tables.
CREATE FUNCTION privacy_participant_columns()
  RETURNS TABLE (table_name text, column_name text, cascades boolean)
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH fk AS (
    SELECT c.conrelid AS rel, a.attname::text AS col
    FROM pg_constraint c
    JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k (child, parent, n) ON true
    JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.parent AND pa.attname = 'participant_id'
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.child
    WHERE c.contype = 'f' AND c.confrelid = 'public.participants'::regclass
  ),
  named AS (
    SELECT a.attrelid AS rel, a.attname::text AS col
    FROM pg_attribute a
    JOIN pg_class t ON t.oid = a.attrelid AND t.relkind IN ('r', 'p')
    JOIN pg_namespace ns ON ns.oid = t.relnamespace AND ns.nspname = 'public'
    WHERE a.attname = 'participant_id' AND NOT a.attisdropped
      AND EXISTS (SELECT 1 FROM pg_attribute ta WHERE ta.attrelid = a.attrelid AND ta.attname = 'tenant_id' AND NOT ta.attisdropped)
  ),
  found AS (SELECT rel, col FROM fk UNION SELECT rel, col FROM named)
  SELECT f.rel::regclass::text, f.col, EXISTS (SELECT 1 FROM fk WHERE fk.rel = f.rel AND fk.col = f.col)
  FROM found f
  WHERE f.rel NOT IN ('public.participants'::regclass, 'public.pii_access_log'::regclass, 'public.participant_erasures'::regclass)
  ORDER BY 1, 2
$$;

-- Erases one participant of the current tenant, in every table at once.
--
-- p_mode 'delete': counts the participant's rows per table, deletes the
-- participant (foreign keys cascade) and then the rows of tables that name the
-- participant without a foreign key.
-- p_mode 'anonymize': keeps every row; text and JSON columns of the
-- participant's rows lose the personal values p_values and the members named
-- p_keys. The participants row itself is handled by the caller.
--
-- Runs as the owner so that it reaches tables whose owners closed them to
-- the application (append-only tables); it refuses any tenant but the one
-- of the current transaction. `app.erasure` is set while it runs so that
-- append-only triggers of other modules can let an erasure through.
CREATE FUNCTION privacy_erase_participant(p_tenant uuid, p_participant text, p_mode text, p_values text[], p_keys text[], p_label text, p_substring_min integer)
  RETURNS TABLE (table_name text, total bigint, changed bigint)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
DECLARE
  target record;
  text_columns text[];
  json_columns text[];
  assignments text;
  differs text;
  n_total bigint;
  n_changed bigint;
BEGIN
  IF p_tenant IS NULL OR p_tenant IS DISTINCT FROM app_current_tenant() THEN
    RAISE EXCEPTION 'privacy_erase_participant: the tenant must be the tenant of the current transaction';
  END IF;
  IF p_mode NOT IN ('delete', 'anonymize') THEN RAISE EXCEPTION 'privacy_erase_participant: unknown mode %', p_mode; END IF;
  PERFORM set_config('app.erasure', 'on', true);

  FOR target IN SELECT * FROM privacy_participant_columns() LOOP
    EXECUTE format('SELECT count(*) FROM %s WHERE tenant_id = $1 AND %I = $2', target.table_name, target.column_name)
      INTO n_total USING p_tenant, p_participant;
    n_changed := 0;
    IF p_mode = 'delete' THEN
      IF NOT target.cascades THEN
        EXECUTE format('DELETE FROM %s WHERE tenant_id = $1 AND %I = $2', target.table_name, target.column_name)
          USING p_tenant, p_participant;
      END IF;
      n_changed := n_total;
    ELSIF n_total > 0 THEN
      SELECT array_agg(a.attname::text ORDER BY a.attnum) FILTER (WHERE t.typname IN ('text', 'varchar', 'bpchar', 'citext')),
             array_agg(a.attname::text ORDER BY a.attnum) FILTER (WHERE t.typname IN ('json', 'jsonb'))
        INTO text_columns, json_columns
      FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
      WHERE a.attrelid = target.table_name::regclass AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
        AND a.attname NOT IN ('tenant_id', target.column_name);
      SELECT string_agg(x, ', '), string_agg(y, ' OR ')
        INTO assignments, differs
      FROM (
        SELECT format('%1$I = privacy_scrub_text(%1$I, $3, CASE WHEN %2$L THEN $5 ELSE NULL END, $6)', c,
                      (SELECT a.attnotnull OR c LIKE '%name%' FROM pg_attribute a WHERE a.attrelid = target.table_name::regclass AND a.attname = c)) AS x,
               format('%1$I IS DISTINCT FROM privacy_scrub_text(%1$I, $3, CASE WHEN %2$L THEN $5 ELSE NULL END, $6)', c,
                      (SELECT a.attnotnull OR c LIKE '%name%' FROM pg_attribute a WHERE a.attrelid = target.table_name::regclass AND a.attname = c)) AS y
        FROM unnest(coalesce(text_columns, '{}')) c
        UNION ALL
        SELECT format('%1$I = privacy_scrub_jsonb(%1$I::jsonb, $3, $4, $6)::%2$s', c,
                      (SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = target.table_name::regclass AND a.attname = c)),
               format('%1$I::jsonb IS DISTINCT FROM privacy_scrub_jsonb(%1$I::jsonb, $3, $4, $6)', c)
        FROM unnest(coalesce(json_columns, '{}')) c
      ) parts;
      IF assignments IS NOT NULL THEN
        EXECUTE format('UPDATE %s SET %s WHERE tenant_id = $1 AND %I = $2 AND (%s)', target.table_name, assignments, target.column_name, differs)
          USING p_tenant, p_participant, p_values, p_keys, p_label, p_substring_min;
        GET DIAGNOSTICS n_changed = ROW_COUNT;
      END IF;
    END IF;
    table_name := target.table_name; total := n_total; changed := n_changed;
    RETURN NEXT;
  END LOOP;

  IF p_mode = 'delete' THEN
    DELETE FROM participants WHERE tenant_id = p_tenant AND participant_id = p_participant;
    GET DIAGNOSTICS n_changed = ROW_COUNT;
    table_name := 'participants'; total := n_changed; changed := n_changed;
    RETURN NEXT;
  END IF;

  PERFORM set_config('app.erasure', '', true);
END $$;
REVOKE ALL ON FUNCTION privacy_erase_participant(uuid, text, text, text[], text[], text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION privacy_erase_participant(uuid, text, text, text[], text[], text, integer) TO loyalty_app;
