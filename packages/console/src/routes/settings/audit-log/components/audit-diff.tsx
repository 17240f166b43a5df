import { Code, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { AuditEntry } from '../../../../hooks/api/settings';

/** Fields that change with every write and say nothing about it. */
const NOISE = new Set(['updated_at', 'livemode', 'item_revision']);
const DEPTH_MAX = 3;
const VALUE_CHARS_MAX = 160;

/** A snapshot as `path → value` pairs, objects opened a few levels deep (`effects.0.points`). */
function flatten(value: unknown, prefix = '', depth = 0, into = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object' && depth < DEPTH_MAX) {
    const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) into.set(prefix, value);
    for (const [key, item] of entries) {
      if (depth === 0 && NOISE.has(key)) continue;
      flatten(item, prefix ? `${prefix}.${key}` : key, depth + 1, into);
    }
    return into;
  }
  if (prefix) into.set(prefix, value);
  return into;
}

function shown(value: unknown): string {
  if (value === undefined) return '—';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > VALUE_CHARS_MAX ? `${text.slice(0, VALUE_CHARS_MAX)}…` : text;
}

export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** The fields whose value differs between two snapshots, in the order they appear. */
export function changedFields(before: unknown, after: unknown): FieldChange[] {
  const a = flatten(before ?? {});
  const b = flatten(after ?? {});
  const fields = [...new Set([...a.keys(), ...b.keys()])];
  return fields.filter((field) => JSON.stringify(a.get(field)) !== JSON.stringify(b.get(field))).map((field) => ({ field, before: a.get(field), after: b.get(field) }));
}

/**
 * An entry's before → after as a table of the fields that changed. A create
 * shows what it was created with, a delete what was deleted; an action without
 * a readable resource (a backtest) shows what was asked and answered.
 */
export function AuditDiff({ entry }: { entry: AuditEntry }) {
  const { t } = useTranslation();
  const changes = changedFields(entry.before, entry.after);
  const asked = (entry.details as { body?: unknown } | null)?.body;
  const caption = entry.before === null && entry.after !== null ? t('auditLog.created') : entry.after === null && entry.before !== null ? t('auditLog.deleted') : t('auditLog.details');
  return (
    <Stack gap="xs" data-testid="audit-diff">
      {changes.length === 0 ? (
        <Text size="sm">{t('auditLog.noChange')}</Text>
      ) : (
        <Table withTableBorder verticalSpacing={4} fz="sm">
          <caption style={{ captionSide: 'top', textAlign: 'start', fontWeight: 700 }}>{caption}</caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('auditLog.field')}</Table.Th>
              <Table.Th>{t('auditLog.before')}</Table.Th>
              <Table.Th>{t('auditLog.after')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {changes.map((change) => (
              <Table.Tr key={change.field}>
                <Table.Th scope="row" fw={500}>
                  {change.field}
                </Table.Th>
                <Table.Td style={{ wordBreak: 'break-word' }}>{shown(change.before)}</Table.Td>
                <Table.Td style={{ wordBreak: 'break-word' }}>{shown(change.after)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      {asked !== null && asked !== undefined && (
        <div>
          <Text size="xs" fw={700}>
            {t('auditLog.asked')}
          </Text>
          <Code block>{JSON.stringify(asked, null, 2).slice(0, 2000)}</Code>
        </div>
      )}
    </Stack>
  );
}
