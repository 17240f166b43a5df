import { Anchor, Badge, Button, Group, Paper, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { AuditEntry } from '../../../../hooks/api/settings';
import { useFormat } from '../../../../lib/format';
import { AuditDiff } from './audit-diff';

/** Who acted, by name: a person's name (or email), a key's name, or the service. */
export function useActorName() {
  const { t } = useTranslation();
  return (entry: AuditEntry) => {
    if (entry.actor_type === 'api_key') return t('auditLog.apiKey', { name: entry.actor_name ?? entry.actor_id });
    if (entry.actor_type === 'system') return t('auditLog.system');
    return entry.actor_name ?? entry.actor_label ?? t('auditLog.removed');
  };
}

/**
 * One entry as a row that wraps on a phone: when, who (a link that filters
 * by them), the action in plain words, the resource by name; it opens to its
 * before → after.
 */
export function AuditEntryItem({ entry, open, onToggle, onPerson }: { entry: AuditEntry; open: boolean; onToggle: () => void; onPerson: () => void }) {
  const { t, i18n } = useTranslation();
  const f = useFormat();
  const name = useActorName()(entry);
  const typeLabel = i18n.exists(`auditLog.resources.${entry.resource_type}`) ? t(`auditLog.resources.${entry.resource_type}`) : entry.resource_type;
  const action = i18n.exists(`auditLog.actions.${entry.action}`) ? t(`auditLog.actions.${entry.action}`) : entry.action.replaceAll(/[._-]/g, ' ');
  const resourceName = entry.resource_name ?? entry.resource_id ?? typeLabel;
  const resourceDetail = [resourceName !== typeLabel ? typeLabel : null, entry.resource_id && entry.resource_id !== resourceName ? entry.resource_id : null].filter(Boolean).join(' · ');
  // The label is "email (role)": beside a person's name it adds the email and role; beside their email, the role only.
  const label = entry.actor_type === 'user' && entry.actor_label ? (entry.actor_label.startsWith(name) ? entry.actor_label.slice(name.length).trim() : entry.actor_label) : '';
  return (
    <Paper component="li" withBorder p="sm" data-testid="audit-entry">
      <Stack gap="xs">
        <Group justify="space-between" align="flex-start" wrap="wrap" gap="sm">
          <Group align="flex-start" wrap="wrap" gap="md">
            <Text size="sm" style={{ whiteSpace: 'nowrap' }} w={130}>
              {f.dateTime(entry.occurred_at)}
            </Text>
            <Badge variant="outline" color="gray.8" style={{ minWidth: 'max-content' }}>
              {action}
            </Badge>
            <Stack gap={0} maw={320}>
              <Text size="sm" fw={600} style={{ wordBreak: 'break-word' }}>
                {resourceName}
              </Text>
              {resourceDetail && (
                <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                  {resourceDetail}
                </Text>
              )}
            </Stack>
            <Stack gap={0} maw={280}>
              <Anchor component="button" type="button" size="sm" ta="start" style={{ wordBreak: 'break-all' }} aria-label={t('auditLog.filterBy', { name })} onClick={onPerson}>
                {name}
              </Anchor>
              {label && (
                <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                  {label}
                </Text>
              )}
            </Stack>
          </Group>
          <Button size="compact-sm" variant="default" aria-expanded={open} aria-label={t('auditLog.showChanges', { name: resourceName })} onClick={onToggle}>
            {t('auditLog.details')}
          </Button>
        </Group>
        {open && <AuditDiff entry={entry} />}
      </Stack>
    </Paper>
  );
}
