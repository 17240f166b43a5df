import { useState } from 'react';
import { Anchor, Button, Group, Select, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useChallenges, type ChallengeStatus } from '../../../hooks/api/challenges';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { StatusBadge } from '../common/status-badge';
import { useFormat, ZoneNote } from '../../../lib/format';

const STATUSES: ChallengeStatus[] = ['draft', 'scheduled', 'active', 'ended', 'archived'];

export function ChallengeList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [status, setStatus] = useState<ChallengeStatus | undefined>(undefined);
  const challenges = useChallenges({ status, cursor: pages.cursor });
  const rows = challenges.data?.challenges ?? [];
  return (
    <Stack>
      <PageHeader title={t('challenges.title')}>
        <RoleGuard permission="programs:write">
          <Button component={Link} to="/competitions/challenges/new">
            {t('challenges.new')}
          </Button>
        </RoleGuard>
      </PageHeader>
      <Group align="flex-end">
        <Select
          label={t('competitions.statusLabel')}
          clearable
          data={STATUSES.map((value) => ({ value, label: t(`competitions.status.${value}`) }))}
          value={status ?? null}
          onChange={(value) => {
            pages.reset();
            setStatus((value ?? undefined) as ChallengeStatus | undefined);
          }}
        />
      </Group>
      <ZoneNote />
      <ErrorAlert error={challenges.error} />
      {challenges.isPending && <Loading />}
      {challenges.data && rows.length === 0 && <Text>{t('challenges.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={720}>
          <Table striped data-testid="challenges">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('challenges.name')}</Table.Th>
                <Table.Th>{t('competitions.statusLabel')}</Table.Th>
                <Table.Th>{t('competitions.startsAt')}</Table.Th>
                <Table.Th>{t('competitions.endsAt')}</Table.Th>
                <Table.Th>{t('challenges.enrolled')}</Table.Th>
                <Table.Th>{t('challenges.completed')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((challenge) => (
                <Table.Tr key={challenge.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/competitions/challenges/${challenge.id}`}>
                      {challenge.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={challenge.status} />
                  </Table.Td>
                  <Table.Td>{f.dateTime(challenge.starts_at)}</Table.Td>
                  <Table.Td>{f.dateTime(challenge.ends_at)}</Table.Td>
                  <Table.Td>{challenge.enrolled_count}</Table.Td>
                  <Table.Td>{challenge.completed_count}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={challenges.data?.next_cursor} />
    </Stack>
  );
}
