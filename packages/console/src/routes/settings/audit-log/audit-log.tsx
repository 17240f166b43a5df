import { Fragment, useEffect, useMemo, useState } from 'react';
import { Anchor, Badge, Button, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useAuditLog, type AuditEntry } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote, type Format } from '../../../lib/format';
import { AuditDiff } from './components/audit-diff';
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

/** Who acted, by name: a person's name (their email and role beside), a key's name, or the service. */
function useActorName() {
  const { t } = useTranslation();
  return (entry: AuditEntry) => {
    if (entry.actor_type === 'api_key') return t('auditLog.apiKey', { name: entry.actor_name ?? entry.actor_id });
    if (entry.actor_type === 'system') return t('auditLog.system');
    return entry.actor_name ?? entry.actor_label ?? t('auditLog.removed');
  };
}

/** Every change made through the admin API, by a person or a key: filter by person, resource and days; each entry opens to its before → after. */
export function AuditLog() {
  const { t, i18n } = useTranslation();
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
  const actionLabel = (action: string) => (i18n.exists(`auditLog.actions.${action}`) ? t(`auditLog.actions.${action}`) : action.replaceAll(/[._-]/g, ' '));
  const typeLabel = (type: string) => (i18n.exists(`auditLog.resources.${type}`) ? t(`auditLog.resources.${type}`) : type);

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
        <ScrollTable minWidth={820}>
          <Table data-testid="audit-log" verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('audit.when')}</Table.Th>
                <Table.Th>{t('audit.who')}</Table.Th>
                <Table.Th>{t('audit.action')}</Table.Th>
                <Table.Th>{t('audit.resource')}</Table.Th>
                <Table.Th>{t('auditLog.details')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((entry) => {
                const name = actorName(entry);
                const resourceName = entry.resource_name ?? entry.resource_id ?? typeLabel(entry.resource_type);
                const expanded = open === entry.id;
                return (
                  <Fragment key={entry.id}>
                    <Table.Tr>
                      <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(entry.occurred_at)}</Table.Td>
                      <Table.Td>
                        <Anchor component="button" type="button" size="sm" aria-label={t('auditLog.filterBy', { name })} onClick={() => change({ ...filters, actorId: entry.actor_id })}>
                          {name}
                        </Anchor>
                        {entry.actor_type === 'user' && entry.actor_label && entry.actor_label !== name && (
                          <Text size="xs" c="dimmed">
                            {entry.actor_label}
                          </Text>
                        )}
                      </Table.Td>
                      <Table.Td>
                        <Badge variant="outline" color="gray.8" style={{ minWidth: 'max-content' }}>
                          {actionLabel(entry.action)}
                        </Badge>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm" fw={500}>
                          {resourceName}
                        </Text>
                        <Text size="xs" c="dimmed">
                          {typeLabel(entry.resource_type)}
                          {entry.resource_id && entry.resource_id !== resourceName ? ` · ${entry.resource_id}` : ''}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Button size="compact-sm" variant="default" aria-expanded={expanded} aria-label={t('auditLog.showChanges', { name: resourceName })} onClick={() => setOpen(expanded ? null : entry.id)}>
                          {t('auditLog.details')}
                        </Button>
                      </Table.Td>
                    </Table.Tr>
                    {expanded && (
                      <Table.Tr>
                        <Table.Td colSpan={5} bg="gray.0">
                          <AuditDiff entry={entry} />
                        </Table.Td>
                      </Table.Tr>
                    )}
                  </Fragment>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={audit.data?.next_cursor} />
    </Stack>
  );
}
