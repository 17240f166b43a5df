import { Anchor, Badge, Button, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useSegments } from '../../../hooks/api/segments';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';

/** The tenant's segments: size (as of the last refresh for those kept up to date), when refreshed, and what uses each. */
export function SegmentList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const segments = useSegments(pages.cursor);
  const rows = segments.data?.segments ?? [];
  return (
    <Stack>
      <PageHeader title={t('segments.title')}>
        <RoleGuard permission="programs:write">
          <Button component={Link} to="/segments/new">
            {t('segments.new')}
          </Button>
        </RoleGuard>
      </PageHeader>
      <Text size="sm" c="dimmed">
        {t('segments.intro')}
      </Text>
      <ErrorAlert error={segments.error} />
      {segments.isPending && <Loading />}
      {segments.data && rows.length === 0 && <Text>{t('segments.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={640}>
          <Table striped data-testid="segments">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('segments.name')}</Table.Th>
                <Table.Th>{t('segments.size')}</Table.Th>
                <Table.Th>{t('segments.refreshedAt')}</Table.Th>
                <Table.Th>{t('segments.usedBy')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((segment) => (
                <Table.Tr key={segment.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/segments/${segment.id}`}>
                      {segment.name}
                    </Anchor>{' '}
                    {segment.materialized && (
                      <Badge color="teal.9" variant="filled" size="sm">
                        {t('segments.kept')}
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>{segment.size === null ? t('segments.sizeLive') : f.number(segment.size)}</Table.Td>
                  <Table.Td>{segment.refreshed_at ? f.dateTime(segment.refreshed_at) : '—'}</Table.Td>
                  <Table.Td>{segment.used_by.length === 0 ? t('segments.unused') : segment.used_by.map((use) => use.name ?? use.id).join(', ')}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={segments.data?.next_cursor} />
      <ZoneNote />
    </Stack>
  );
}
