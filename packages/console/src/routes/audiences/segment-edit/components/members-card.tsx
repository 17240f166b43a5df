import { Card, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useSegmentMembers, type Segment } from '../../../../hooks/api/segments';
import { ErrorAlert } from '../../../../components/error-alert';
import { Loading, ScrollTable } from '../../../../components/loading';
import { Pager, useCursorPages } from '../../../../components/pager';
import { MemberRows } from '../../common/member-rows';

/** The saved segment's members, a page at a time, masked as the reader's role sees them. */
export function MembersCard({ segment }: { segment: Segment }) {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const members = useSegmentMembers(segment.id, pages.cursor);
  const rows = members.data?.members ?? [];
  return (
    <Card withBorder>
      <Stack>
        <Title order={2} size="h4">
          {t('segments.members')}
        </Title>
        <ErrorAlert error={members.error} />
        {members.isPending && <Loading />}
        {members.data && rows.length === 0 && <Text size="sm">{t('segments.noMembers')}</Text>}
        {rows.length > 0 && (
          <ScrollTable minWidth={560}>
            <Table striped data-testid="segment-members" aria-label={t('segments.members')}>
              <MemberRows members={rows} />
            </Table>
          </ScrollTable>
        )}
        <Pager pages={pages} nextCursor={members.data?.next_cursor} />
      </Stack>
    </Card>
  );
}
