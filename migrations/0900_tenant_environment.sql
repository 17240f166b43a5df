-- A tenant is live (real participants, real money) or a sandbox (an
-- integrator's playground). Test controls — the tenant test clock, private
-- webhook receivers, a faster webhook backoff — work only in a sandbox, so a
-- live tenant can never be moved in time or made to call its own network.
-- The environment is chosen at creation and never changes.
ALTER TABLE tenants ADD COLUMN environment text NOT NULL DEFAULT 'live' CHECK (environment IN ('live', 'sandbox'));
