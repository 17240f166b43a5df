import { useState } from 'react';
import { Anchor, Badge, Button, Group, Select, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useEngagements, type EngagementStatus } from '../../../hooks/api/engagements';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';

export function EngagementList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [status, setStatus] = useState<EngagementStatus | undefined>(undefined);
  const engagements = useEngagements({ status, cursor: pages.cursor });
  const rows = engagements.data?.engagements ?? [];
  return (
    <Stack>
      <PageHeader title={t('engagements.title')}>
        <RoleGuard permission="programs:write">
          <Button component={Link} to="/engagements/new">
            {t('engagements.new')}
          </Button>
        </RoleGuard>
      </PageHeader>
      <Group align="flex-end">
        <Select
          label={t('engagements.statusFilter')}
          clearable
          data={[
            { value: 'draft', label: t('engagements.status.draft') },
            { value: 'published', label: t('engagements.status.published') },
          ]}
          value={status ?? null}
          onChange={(value) => {
            pages.reset();
            setStatus((value ?? undefined) as EngagementStatus | undefined);
          }}
        />
      </Group>
      <ErrorAlert error={engagements.error} />
      {engagements.isPending && <Loading />}
      {engagements.data && rows.length === 0 && <Text>{t('engagements.none')}</Text>}
      {rows.length > 0 && <ZoneNote />}
      {rows.length > 0 && (
        <ScrollTable minWidth={640}>
          <Table striped data-testid="engagements">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('engagements.name')}</Table.Th>
                <Table.Th>{t('engagements.siteSlug')}</Table.Th>
                <Table.Th>{t('engagements.activities')}</Table.Th>
                <Table.Th>{t('engagements.statusFilter')}</Table.Th>
                <Table.Th>{t('engagements.updated')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((engagement) => (
                <Table.Tr key={engagement.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/engagements/${engagement.id}`}>
                      {engagement.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{engagement.site_slug}</Table.Td>
                  <Table.Td>{engagement.activities.map((a) => t(`engagements.kinds.${a.type}`)).join(', ') || '—'}</Table.Td>
                  <Table.Td>
                    <Group gap={4}>
                      <Badge color={engagement.status === 'published' ? 'teal.9' : 'gray.7'} variant="filled">
                        {t(`engagements.status.${engagement.status}`)}
                      </Badge>
                      {engagement.status === 'published' && engagement.has_unpublished_changes && (
                        <Badge color="yellow.9" variant="filled">
                          {t('engagements.unpublishedChanges')}
                        </Badge>
                      )}
                    </Group>
                  </Table.Td>
                  <Table.Td>{f.dateTime(engagement.updated_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={engagements.data?.next_cursor} />
    </Stack>
  );
}
