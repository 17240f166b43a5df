-- The tenant's settings the console edits beside its time zone: the currency
-- its money amounts are in (ISO 4217) and the locale its staff and messages
-- use (a BCP 47 tag). The service validates both against Intl before writing;
-- the checks here only keep the shapes honest.
ALTER TABLE tenants
  ADD COLUMN currency text NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
  ADD COLUMN locale text NOT NULL DEFAULT 'en-US' CHECK (char_length(locale) BETWEEN 2 AND 35);
