-- Review finding 8 (issue 32): an admin login token (POST /auth/login) outlived a password
-- change and a sign-out. Each console user gets a token version; the token carries the version it
-- was issued under (the `ver` claim) and is refused once the user's version moved on. The service
-- bumps it on a password change, a console sign-out, POST /auth/logout, a role change and a
-- disable (src/modules/users/service.ts). Tokens issued before this migration carry no `ver` and
-- count as version 0, so they end at their user's first bump like any other.
-- The column belongs to admin_users, which already has its tenant policy (0001) and the
-- application role's grants (default privileges): nothing else to grant.
ALTER TABLE admin_users
  ADD COLUMN token_version integer NOT NULL DEFAULT 0 CHECK (token_version >= 0);
