import { useState } from 'react';
import { Anchor, Badge, Group, SegmentedControl, Select, Stack, Table, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useApproveReview, useReturnReview, useReviews, type Review, type ReviewKind, type ReviewStatus } from '../../../hooks/api/reviews';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { ConfirmButton } from '../../../components/confirm-button';
import { useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';

const STATUS_COLOR: Record<ReviewStatus, string> = { pending: 'indigo.9', approved: 'teal.9', returned: 'red.9' };

/** Where an item of each kind is edited; kinds whose screens are not built yet show their name only. */
const ITEM_PATH: Partial<Record<ReviewKind, (id: string) => string>> = { rule: (id) => `/programs/rules/${id}` };

function Decision({ review }: { review: Review }) {
  const { t } = useTranslation();
  const approve = useApproveReview();
  const giveBack = useReturnReview();
  const canPublish = useCan('programs:publish');
  const [note, setNote] = useState('');
  if (review.status === 'pending' && canPublish) {
    return (
      <Group gap="xs" wrap="nowrap">
        <ConfirmButton
          size="xs"
          label={t('reviews.approve')}
          aria-label={t('reviews.approveNamed', { name: review.item_name })}
          title={t('reviews.approveTitle', { name: review.item_name })}
          message={t('reviews.approveMessage', { kind: t(`reviews.kinds.${review.kind}`).toLowerCase() })}
          confirmLabel={t('reviews.approve')}
          destructive={false}
          onConfirm={() => approve.mutateAsync(review.id)}
        />
        <ConfirmButton
          size="xs"
          variant="default"
          label={t('reviews.return')}
          aria-label={t('reviews.returnNamed', { name: review.item_name })}
          title={t('reviews.returnTitle', { name: review.item_name })}
          message={t('reviews.returnMessage')}
          confirmLabel={t('reviews.return')}
          destructive={false}
          confirmDisabled={note.trim() === ''}
          onConfirm={async () => {
            await giveBack.mutateAsync({ id: review.id, note: note.trim() });
            setNote('');
          }}
        >
          <Textarea label={t('reviews.returnNote')} value={note} required maxLength={2000} onChange={(event) => setNote(event.currentTarget.value)} />
        </ConfirmButton>
      </Group>
    );
  }
  if (review.status === 'pending') return null;
  return (
    <Stack gap={2}>
      <Text size="sm">{t('reviews.decidedBy', { status: t(`reviews.statuses.${review.status}`), who: review.decided_by?.email ?? review.decided_by?.id ?? '' })}</Text>
      {review.decision_note && <Text size="sm">{review.decision_note}</Text>}
    </Stack>
  );
}

/** The review requests: publishers approve or return pending ones; everyone else sees where their drafts stand. */
export function ReviewList() {
  const { t, i18n } = useTranslation();
  const pages = useCursorPages();
  const [status, setStatus] = useState<ReviewStatus>('pending');
  const [kind, setKind] = useState<ReviewKind | undefined>(undefined);
  const reviews = useReviews({ status, kind, cursor: pages.cursor });
  const rows = reviews.data?.reviews ?? [];
  const when = new Intl.DateTimeFormat(i18n.language, { dateStyle: 'medium', timeStyle: 'short' });
  return (
    <Stack>
      <PageHeader title={t('reviews.title')} />
      <Text>{t('reviews.intro')}</Text>
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
            data={(['pending', 'approved', 'returned'] as const).map((value) => ({ value, label: t(`reviews.statuses.${value}`) }))}
          />
        </Stack>
        <Select
          label={t('reviews.kind')}
          placeholder={t('reviews.allKinds')}
          clearable
          data={(['rule', 'engagement', 'challenge', 'contest'] as const).map((value) => ({ value, label: t(`reviews.kinds.${value}`) }))}
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
        <ScrollTable minWidth={760}>
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
                      {path ? (
                        <Anchor component={Link} to={path}>
                          {review.item_name}
                        </Anchor>
                      ) : (
                        review.item_name
                      )}
                    </Table.Td>
                    <Table.Td>{t(`reviews.kinds.${review.kind}`)}</Table.Td>
                    <Table.Td>{review.submitted_by.email ?? review.submitted_by.id}</Table.Td>
                    <Table.Td>{when.format(new Date(review.submitted_at))}</Table.Td>
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
