-- Issue 21 item 8 (an embed runtime that fits a brand): the participant's
-- language, which the runtime prefers over the browser's, and a picture for
-- each reward, shown beside its name. Formats are checked in the service
-- (participants/fields.ts checkLocale, rewards/schemas.ts); the checks here
-- bound lengths and shapes only.

ALTER TABLE participants
  -- A BCP 47 language tag in canonical form (`de`, `pt-BR`, `zh-Hant-TW`).
  ADD COLUMN locale text CHECK (char_length(locale) BETWEEN 2 AND 35 AND locale ~ '^[A-Za-z0-9-]+$');

ALTER TABLE rewards
  ADD COLUMN image_url text CHECK (char_length(image_url) <= 2048 AND image_url LIKE 'https://%');
