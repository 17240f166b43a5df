import { useState } from 'react';
import { Anchor, Button, Group, Select, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useContests, type ContestStatus } from '../../../hooks/api/contests';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { StatusBadge } from '../common/status-badge';
import { useFormat, ZoneNote } from '../../../lib/format';

export const CONTEST_STATUSES: ContestStatus[] = ['draft', 'scheduled', 'active', 'scoring', 'completed'];

export function ContestList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [status, setStatus] = useState<ContestStatus | undefined>(undefined);
  const contests = useContests({ status, cursor: pages.cursor });
  const rows = contests.data?.contests ?? [];
  return (
    <Stack>
      <PageHeader title={t('contests.title')}>
        <RoleGuard permission="programs:write">
          <Button component={Link} to="/competitions/contests/new">
            {t('contests.new')}
          </Button>
        </RoleGuard>
      </PageHeader>
      <Group align="flex-end">
        <Select
          label={t('competitions.statusLabel')}
          clearable
          data={CONTEST_STATUSES.map((value) => ({ value, label: t(`competitions.status.${value}`) }))}
          value={status ?? null}
          onChange={(value) => {
            pages.reset();
            setStatus((value ?? undefined) as ContestStatus | undefined);
          }}
        />
      </Group>
      <ZoneNote />
      <ErrorAlert error={contests.error} />
      {contests.isPending && <Loading />}
      {contests.data && rows.length === 0 && <Text>{t('contests.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={720}>
          <Table striped data-testid="contests">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('contests.contestTitle')}</Table.Th>
                <Table.Th>{t('competitions.statusLabel')}</Table.Th>
                <Table.Th>{t('competitions.startsAt')}</Table.Th>
                <Table.Th>{t('competitions.endsAt')}</Table.Th>
                <Table.Th>{t('contests.entries')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((contest) => (
                <Table.Tr key={contest.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/competitions/contests/${encodeURIComponent(contest.id)}`}>
                      {contest.title}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={contest.status} />
                  </Table.Td>
                  <Table.Td>{f.dateTime(contest.starts_at)}</Table.Td>
                  <Table.Td>{f.dateTime(contest.ends_at)}</Table.Td>
                  <Table.Td>{contest.entry_count}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={contests.data?.next_cursor} />
    </Stack>
  );
}
