import { useState } from 'react';
import { Anchor, Autocomplete, Badge, Button, Group, Progress, Select, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useRules } from '../../../hooks/api/programs';
import { useEventNames } from '../../../hooks/api/event-names';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { TRIGGERS } from '../common/rule-draft';
import { useFormat } from '../../../lib/format';

type Trigger = (typeof TRIGGERS)[number];

export function RuleList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [status, setStatus] = useState<'draft' | 'active' | 'paused' | undefined>(undefined);
  const [trigger, setTrigger] = useState<Trigger | undefined>(undefined);
  const [eventName, setEventName] = useState('');
  const rules = useRules({ status, trigger, event_name: eventName, cursor: pages.cursor });
  const names = useEventNames('');
  const rows = rules.data?.rules ?? [];
  const f = useFormat();
  return (
    <Stack>
      <PageHeader title={t('rules.title')}>
        <RoleGuard permission="programs:write">
          <Button component={Link} to="/programs/rules/new">
            {t('rules.new')}
          </Button>
        </RoleGuard>
      </PageHeader>
      <Group align="flex-end">
        <Select
          label={t('rules.status')}
          clearable
          data={[
            { value: 'draft', label: t('rules.draft') },
            { value: 'active', label: t('rules.active') },
            { value: 'paused', label: t('rules.paused') },
          ]}
          value={status ?? null}
          onChange={(value) => {
            pages.reset();
            setStatus((value ?? undefined) as 'draft' | 'active' | 'paused' | undefined);
          }}
        />
        <Select
          label={t('rules.filterTrigger')}
          clearable
          data={TRIGGERS.map((value) => ({ value, label: t(`rules.triggers.${value}`) }))}
          value={trigger ?? null}
          onChange={(value) => {
            pages.reset();
            setTrigger((value ?? undefined) as Trigger | undefined);
          }}
        />
        <Autocomplete
          label={t('rules.eventName')}
          data={(names.data?.names ?? []).map((n) => n.event_name)}
          value={eventName}
          onChange={(value) => {
            pages.reset();
            setEventName(value);
          }}
          limit={50}
          clearable
        />
      </Group>
      <ErrorAlert error={rules.error} />
      {rules.isPending && <Loading />}
      {rules.data && rows.length === 0 && <Text>{t('rules.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={600}>
          <Table striped data-testid="rules">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('rules.name')}</Table.Th>
                <Table.Th>{t('rules.trigger')}</Table.Th>
                <Table.Th>{t('rules.status')}</Table.Th>
                <Table.Th>{t('rules.budget')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((rule) => (
                <Table.Tr key={rule.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/programs/rules/${rule.id}`}>
                      {rule.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{rule.trigger === 'event' ? rule.event_name : rule.trigger === 'recurring' ? t(`rules.schedules.${rule.schedule}`) : t('rules.triggers.birthday')}</Table.Td>
                  <Table.Td>
                    <Badge color={rule.status === 'active' ? 'teal.9' : 'gray.7'} variant="filled">
                      {t(`rules.${rule.status}`)}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    {rule.budget_points === null ? (
                      t('rules.budgetNone')
                    ) : (
                      <Stack gap={2}>
                        <Text size="sm">{t('rules.budgetOf', { spent: f.number(rule.budget_spent), budget: f.number(rule.budget_points) })}</Text>
                        <Progress value={Math.min(100, (rule.budget_spent / rule.budget_points) * 100)} color={rule.budget_spent >= rule.budget_points ? 'red.9' : 'teal.9'} size="sm" aria-label={t('rules.budgetSpentLabel', { spent: rule.budget_spent, budget: rule.budget_points })} />
                      </Stack>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={rules.data?.next_cursor} />
    </Stack>
  );
}
