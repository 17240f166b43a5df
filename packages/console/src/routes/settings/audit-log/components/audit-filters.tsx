import { Button, Group, Select, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { settingsStrings } from '../../strings';

/** The filters of the audit log as the screen holds them: days are the tenant's calendar days (`2026-11-27`). */
export interface AuditFilterValues {
  actorId: string | null;
  resourceType: string | null;
  resourceId: string;
  fromDay: string;
  toDay: string;
}

export const NO_FILTERS: AuditFilterValues = { actorId: null, resourceType: null, resourceId: '', fromDay: '', toDay: '' };

export const RESOURCE_TYPES = Object.keys(settingsStrings.auditLog.resources);

/** Person, resource type and id, and a range of days; every change resets the pages. */
export function AuditFilters({
  value,
  onChange,
  people,
}: {
  value: AuditFilterValues;
  onChange: (next: AuditFilterValues) => void;
  people: Array<{ value: string; label: string }>;
}) {
  const { t } = useTranslation();
  const set = (patch: Partial<AuditFilterValues>) => onChange({ ...value, ...patch });
  return (
    <Group align="flex-end" wrap="wrap" role="search" aria-label={t('common.search')}>
      <Select
        label={t('auditLog.person')}
        description={t('auditLog.personHelp')}
        placeholder={t('auditLog.anyone')}
        data={people}
        value={value.actorId}
        onChange={(actorId) => set({ actorId })}
        clearable
        searchable
        w={240}
      />
      <Select
        label={t('auditLog.resourceType')}
        placeholder={t('auditLog.anyResource')}
        data={RESOURCE_TYPES.map((type) => ({ value: type, label: t(`auditLog.resources.${type}`) }))}
        value={value.resourceType}
        onChange={(resourceType) => set({ resourceType })}
        clearable
        w={200}
      />
      <TextInput label={t('auditLog.resourceId')} value={value.resourceId} onChange={(event) => set({ resourceId: event.currentTarget.value })} w={220} />
      <TextInput label={t('auditLog.from')} type="date" value={value.fromDay} onChange={(event) => set({ fromDay: event.currentTarget.value })} w={160} />
      <TextInput label={t('auditLog.to')} type="date" value={value.toDay} onChange={(event) => set({ toDay: event.currentTarget.value })} w={160} />
      <Button variant="default" onClick={() => onChange(NO_FILTERS)}>
        {t('auditLog.clear')}
      </Button>
    </Group>
  );
}
