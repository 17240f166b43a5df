import { useEffect, useMemo, useState } from 'react';
import { Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useAuditLog, type AuditEntry } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { Loading } from '../../../components/loading';
import { useFormat, ZoneNote, type Format } from '../../../lib/format';
import { AuditEntryItem, useActorName } from './components/audit-entry';
import { AuditFilters, NO_FILTERS, type AuditFilterValues } from './components/audit-filters';

/** The day after a calendar day (`2026-11-27` → `2026-11-28`), for an inclusive "to". */
function nextDay(day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

/** The API's query for the screen's filters: days are the tenant's, from its midnight to the midnight after "to". */
function queryOf(filters: AuditFilterValues, f: Format) {
  return {
    actor_id: filters.actorId ?? undefined,
    resource_type: filters.resourceType ?? undefined,
    resource_id: filters.resourceId.trim() || undefined,
    from: filters.fromDay ? f.fromZonedInput(`${filters.fromDay}T00:00`) : undefined,
    to: filters.toDay ? f.fromZonedInput(`${nextDay(filters.toDay)}T00:00`) : undefined,
  };
}

/** Every change made through the admin API, by a person or a key: filter by person, resource and days; each entry opens to its before → after. */
export function AuditLog() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [filters, setFilters] = useState<AuditFilterValues>(NO_FILTERS);
  const [open, setOpen] = useState<string | null>(null);
  const audit = useAuditLog({ ...queryOf(filters, f), cursor: pages.cursor });
  const rows = audit.data?.entries ?? [];
  const actorName = useActorName();
  // The people the log has shown so far: the person filter offers them (an analyst may not list the console's users).
  const [people, setPeople] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    const seen = rows.filter((entry) => !people.has(entry.actor_id));
    if (seen.length > 0) setPeople((known) => new Map([...known, ...seen.map((entry) => [entry.actor_id, actorName(entry)] as const)]));
  }, [rows]); // eslint-disable-line react-hooks/exhaustive-deps
  const personOptions = useMemo(() => [...people].map(([value, label]) => ({ value, label })), [people]);
  const change = (next: AuditFilterValues) => {
    pages.reset();
    setOpen(null);
    setFilters(next);
  };

  return (
    <Stack>
      <PageHeader title={t('audit.title')} />
      <Text>{t('auditLog.intro')}</Text>
      <ZoneNote />
      <AuditFilters value={filters} onChange={change} people={personOptions} />
      <ErrorAlert error={audit.error} />
      {audit.isPending && <Loading />}
      {audit.data && rows.length === 0 && <Text>{t('audit.none')}</Text>}
      {rows.length > 0 && (
        <Stack component="ul" gap="xs" p={0} m={0} style={{ listStyle: 'none' }} data-testid="audit-log" aria-label={t('audit.title')}>
          {rows.map((entry) => (
            <AuditEntryItem
              key={entry.id}
              entry={entry}
              open={open === entry.id}
              onToggle={() => setOpen(open === entry.id ? null : entry.id)}
              onPerson={() => change({ ...filters, actorId: entry.actor_id })}
            />
          ))}
        </Stack>
      )}
      <Pager pages={pages} nextCursor={audit.data?.next_cursor} />
    </Stack>
  );
}
