import { useState } from 'react';
import { Anchor, Badge, Group, SegmentedControl, Select, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useReviews, type ReviewKind, type ReviewStatus } from '../../../hooks/api/reviews';
import { BacktestSummary } from '../../../components/publication-controls';
import { useFormat, ZoneNote } from '../../../lib/format';
import { Decision } from './components/decision';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { Loading, ScrollTable } from '../../../components/loading';

const STATUS_COLOR: Record<ReviewStatus, string> = { pending: 'indigo.9', approved: 'teal.9', returned: 'red.9', published: 'teal.9' };

/** Where an item of each kind is edited; kinds whose screens are not built yet show their name only. */
const ITEM_PATH: Partial<Record<ReviewKind, (id: string) => string>> = { rule: (id) => `/programs/rules/${id}`, segment: (id) => `/segments/${id}` };

/** The review requests: publishers approve or return pending ones; everyone else sees where their drafts stand. */
export function ReviewList() {
  const { t } = useTranslation();
  const f = useFormat();
  const pages = useCursorPages();
  const [status, setStatus] = useState<ReviewStatus>('pending');
  const [kind, setKind] = useState<ReviewKind | undefined>(undefined);
  const reviews = useReviews({ status, kind, cursor: pages.cursor });
  const rows = reviews.data?.reviews ?? [];
  return (
    <Stack>
      <PageHeader title={t('reviews.title')} />
      <Text>{t('reviews.intro')}</Text>
      <ZoneNote />
      <Group align="flex-end">
        <Stack gap={4}>
          <Text size="sm" fw={700} id="review-status-label">
            {t('reviews.status')}
          </Text>
          <SegmentedControl
            aria-labelledby="review-status-label"
            value={status}
            onChange={(value) => {
              pages.reset();
              setStatus(value as ReviewStatus);
            }}
            data={(['pending', 'approved', 'returned', 'published'] as const).map((value) => ({ value, label: t(`reviews.statuses.${value}`) }))}
          />
        </Stack>
        <Select
          label={t('reviews.kind')}
          placeholder={t('reviews.allKinds')}
          clearable
          data={(['rule', 'engagement', 'challenge', 'contest', 'segment'] as const).map((value) => ({ value, label: t(`reviews.kinds.${value}`) }))}
          value={kind ?? null}
          onChange={(value) => {
            pages.reset();
            setKind((value ?? undefined) as ReviewKind | undefined);
          }}
        />
      </Group>
      <ErrorAlert error={reviews.error} />
      {reviews.isPending && <Loading />}
      {reviews.data && rows.length === 0 && <Text>{t('reviews.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={900}>
          <Table striped data-testid="reviews">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('reviews.item')}</Table.Th>
                <Table.Th>{t('reviews.kind')}</Table.Th>
                <Table.Th>{t('reviews.submittedBy')}</Table.Th>
                <Table.Th>{t('reviews.submittedAt')}</Table.Th>
                <Table.Th>{t('reviews.note')}</Table.Th>
                <Table.Th>{t('reviews.status')}</Table.Th>
                <Table.Th>{t('reviews.decision')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((review) => {
                const path = ITEM_PATH[review.kind]?.(review.item_id);
                return (
                  <Table.Tr key={review.id}>
                    <Table.Td>
                      <Stack gap={4}>
                        {path ? (
                          <Anchor component={Link} to={path}>
                            {review.item_name}
                          </Anchor>
                        ) : (
                          <Text size="sm">{review.item_name}</Text>
                        )}
                        {review.kind === 'rule' &&
                          (review.backtest ? (
                            <div aria-label={t('reviews.backtest')} role="group">
                              <Text size="xs" fw={700}>
                                {t('reviews.backtest')}
                              </Text>
                              <BacktestSummary backtest={review.backtest} />
                            </div>
                          ) : (
                            <Text size="xs" c="dimmed">
                              {t('reviews.noBacktest')}
                            </Text>
                          ))}
                      </Stack>
                    </Table.Td>
                    <Table.Td>{t(`reviews.kinds.${review.kind}`)}</Table.Td>
                    <Table.Td>{review.submitted_by.email ?? review.submitted_by.id}</Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{f.dateTime(review.submitted_at)}</Table.Td>
                    <Table.Td>{review.note ?? '—'}</Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>
                      {/* The table squeezes its columns: the badge keeps its whole word. */}
                      <Badge color={STATUS_COLOR[review.status]} variant="filled" style={{ minWidth: 'max-content' }}>
                        {t(`reviews.statuses.${review.status}`)}
                      </Badge>
                    </Table.Td>
                    <Table.Td>
                      <Decision review={review} />
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={reviews.data?.next_cursor} />
    </Stack>
  );
}
