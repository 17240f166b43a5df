-- Birthday rules look participants up by month and day of birth, page by page.
CREATE INDEX participants_birthday ON participants (
  tenant_id,
  (date_part('month', date_of_birth::timestamp)),
  (date_part('day', date_of_birth::timestamp)),
  participant_id
) WHERE date_of_birth IS NOT NULL;
