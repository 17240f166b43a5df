import { Fragment, useState } from 'react';
import { Badge, Button, Group, Select, Stack, Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useDecideReview, useReviews } from '../../../hooks/api/fraud';
import { useConversions, useDecideConversion } from '../../../hooks/api/referrals';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading, ScrollTable } from '../../../components/loading';
import { StatusBadge } from '../../competitions/common/status-badge';
import { useFormat, ZoneNote } from '../../../lib/format';
import { conversionDecision, DecisionButton, REVIEW_DECISION } from './components/decision-button';
import { useDecisionLock } from './components/decision-lock';
import { DecisionTrail } from './components/decision-trail';
import { CONVERSION_FILTER, fromConversion, fromReview, wasHeld, type ItemKind, type ItemStatus, type QueueItem } from './queue-item';

/** The page of each source: both lists are cursor-paginated, so the queue keeps one cursor for each. */
interface Cursors {
  review?: string;
  referral?: string;
  /** A source whose last page was shown is not asked again. */
  reviewDone?: boolean;
  referralDone?: boolean;
}

export function ReviewQueue() {
  const { t } = useTranslation();
  const lock = useDecisionLock();
  const f = useFormat();
  const [kind, setKind] = useState<ItemKind | undefined>(undefined);
  const [status, setStatus] = useState<ItemStatus | undefined>('pending');
  const [pages, setPages] = useState<Cursors[]>([{}]);
  const [open, setOpen] = useState<string | null>(null);
  const page = pages[pages.length - 1];
  const wantReviews = kind !== 'referral' && !page.reviewDone;
  const wantReferrals = kind !== 'contest_entry' && !page.referralDone;
  const reviews = useReviews({ status, cursor: page.review }, wantReviews);
  const conversions = useConversions({ status: status ? CONVERSION_FILTER[status] : undefined, cursor: page.referral }, wantReferrals);
  const decideReview = useDecideReview();
  const decideConversion = useDecideConversion();
  const reset = () => setPages([{}]);

  const items: QueueItem[] = [
    ...(wantReviews ? (reviews.data?.reviews ?? []).map(fromReview) : []),
    ...(wantReferrals ? (conversions.data?.conversions ?? []).filter(wasHeld).map(fromConversion) : []),
  ].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const next: Cursors = {
    review: reviews.data?.next_cursor ?? undefined,
    referral: conversions.data?.next_cursor ?? undefined,
    reviewDone: !wantReviews || !reviews.data?.next_cursor,
    referralDone: !wantReferrals || !conversions.data?.next_cursor,
  };
  const hasNext = !next.reviewDone || !next.referralDone;
  const pending = (wantReviews && reviews.isPending) || (wantReferrals && conversions.isPending);

  const decide = (item: QueueItem, approve: boolean, reason: string) =>
    item.kind === 'contest_entry'
      ? decideReview.mutateAsync({ reviewId: item.id, decision: approve ? 'approve' : 'disqualify', reason })
      : decideConversion.mutateAsync({ id: item.id, decision: approve ? 'approve' : 'reject', note: reason });

  return (
    <Stack>
      <PageHeader title={t('fraud.title')} />
      <Text c="dimmed">{t('fraud.explain')}</Text>
      {lock.note}
      <ZoneNote />
      <Group align="flex-end">
        <Select
          label={t('fraud.kind')}
          clearable
          data={(['contest_entry', 'referral'] as const).map((value) => ({ value, label: t(`fraud.kinds.${value}`) }))}
          value={kind ?? null}
          onChange={(value) => {
            reset();
            setKind((value ?? undefined) as ItemKind | undefined);
          }}
        />
        <Select
          label={t('competitions.statusLabel')}
          clearable
          data={(['pending', 'approved', 'disqualified'] as const).map((value) => ({ value, label: t(`fraud.statuses.${value}`) }))}
          value={status ?? null}
          onChange={(value) => {
            reset();
            setStatus((value ?? undefined) as ItemStatus | undefined);
          }}
        />
      </Group>
      <ErrorAlert error={reviews.error ?? conversions.error} />
      {pending && <Loading />}
      {!pending && items.length === 0 && <Text>{t('fraud.none')}</Text>}
      {/* Both sources are shown together, so the queue does not reorder itself as the second one arrives. */}
      {!pending && items.length > 0 && (
        <ScrollTable minWidth={820}>
          <Table data-testid="review-queue">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('fraud.kind')}</Table.Th>
                <Table.Th>{t('fraud.subject')}</Table.Th>
                <Table.Th>{t('fraud.reasons')}</Table.Th>
                <Table.Th>{t('fraud.heldAt')}</Table.Th>
                <Table.Th>{t('competitions.statusLabel')}</Table.Th>
                <Table.Th>{t('common.actions')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((item) => (
                <Fragment key={item.key}>
                  <Table.Tr data-testid="queue-item" data-kind={item.kind}>
                    <Table.Td>
                      <Badge variant="outline" color="dark" miw="max-content">
                        {t(`fraud.kinds.${item.kind}`)}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{item.subject}</Table.Td>
                    <Table.Td>{item.reasons.map((r) => t(`fraud.signals.${r}`, { defaultValue: r })).join(', ') || '—'}</Table.Td>
                    <Table.Td>{f.dateTime(item.createdAt)}</Table.Td>
                    <Table.Td>
                      <StatusBadge status={item.status} />
                    </Table.Td>
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        {item.status === 'pending' &&
                          [true, false].map((approve) => (
                            <DecisionButton
                              key={String(approve)}
                              approve={approve}
                              subject={item.subject}
                              target={item.kind === 'contest_entry' ? REVIEW_DECISION : conversionDecision(approve)}
                              onDecide={(reason) => decide(item, approve, reason)}
                              disabledReasonId={lock.disabledReasonId}
                            />
                          ))}
                        <Button
                          size="compact-sm"
                          variant="default"
                          aria-expanded={open === item.key}
                          aria-label={t('fraud.trailNamed', { subject: item.subject })}
                          onClick={() => setOpen(open === item.key ? null : item.key)}
                        >
                          {t('fraud.trailToggle')}
                        </Button>
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                  {open === item.key && (
                    <Table.Tr>
                      <Table.Td colSpan={6}>
                        <DecisionTrail item={item} />
                      </Table.Td>
                    </Table.Tr>
                  )}
                </Fragment>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      {(pages.length > 1 || hasNext) && (
        <Group justify="space-between" component="nav" aria-label={t('common.pagination')}>
          <Button variant="default" disabled={pages.length === 1} onClick={() => setPages((s) => s.slice(0, -1))}>
            {t('common.previous')}
          </Button>
          <span>{t('common.page', { page: pages.length })}</span>
          <Button variant="default" disabled={!hasNext} onClick={() => setPages((s) => [...s, next])}>
            {t('common.next')}
          </Button>
        </Group>
      )}
    </Stack>
  );
}
