-- Engagements: a tenant's interactive pages (screens, components, canvas,
-- activities and their on-completion actions), edited as a draft and served
-- to the public only as the snapshot taken at publication.
CREATE TABLE engagements (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id uuid NOT NULL,
  site_slug text NOT NULL CHECK (site_slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'published')),
  -- The editable definition, secrets included (quiz answers, wheel weights).
  definition jsonb NOT NULL,
  version integer NOT NULL DEFAULT 1,
  -- The definition as it was published; the public site route serves a redacted form of it.
  published_definition jsonb,
  published_version integer,
  published_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  CHECK ((status = 'published') = (published_definition IS NOT NULL))
);
-- A site serves one published engagement at a time.
CREATE UNIQUE INDEX engagements_published_site ON engagements (tenant_id, site_slug) WHERE status = 'published';
CREATE INDEX engagements_listing ON engagements (tenant_id, created_at DESC, id DESC);
CALL enable_tenant_rls('engagements');

-- The activities of the published snapshot, one row each, so the runtime finds
-- an activity by key instead of searching the definition. Replaced at every
-- publication and removed at unpublication.
CREATE TABLE engagement_activities (
  tenant_id uuid NOT NULL,
  engagement_id uuid NOT NULL,
  activity_id text NOT NULL,
  activity_type text NOT NULL CHECK (activity_type IN ('spin_wheel', 'quiz')),
  config jsonb NOT NULL,
  PRIMARY KEY (tenant_id, engagement_id, activity_id),
  FOREIGN KEY (tenant_id, engagement_id) REFERENCES engagements (tenant_id, id) ON DELETE CASCADE
);
CALL enable_tenant_rls('engagement_activities');

-- Impressions feed the frequency caps of trigger rules. `visitor_id` is the
-- participant id, or an anonymous visitor id chosen by the embedding page.
CREATE TABLE engagement_impressions (
  tenant_id uuid NOT NULL,
  id uuid NOT NULL,
  engagement_id uuid NOT NULL,
  visitor_id text NOT NULL CHECK (char_length(visitor_id) BETWEEN 1 AND 128),
  url text,
  occurred_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, engagement_id) REFERENCES engagements (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX engagement_impressions_visitor ON engagement_impressions (tenant_id, engagement_id, visitor_id, occurred_at DESC);
CALL enable_tenant_rls('engagement_impressions');
