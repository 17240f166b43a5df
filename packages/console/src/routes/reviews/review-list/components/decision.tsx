import { Group, Stack, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useApproveReview, useReturnReview, type Review } from '../../../../hooks/api/reviews';
import { useEngagement } from '../../../../hooks/api/engagements';
import { ConfirmButton } from '../../../../components/confirm-button';
import { FormDialog } from '../../../../components/publication-controls';
import { useCan } from '../../../../components/permission';
import { useApiForm } from '../../../../lib/forms';
import { useFormat } from '../../../../lib/format';

/**
 * Whether the reviewed item is live already, so that the dialogs say what
 * approving and returning do to it: only an engagement is reviewed while live
 * (its unpublished changes); rules, challenges and contests are reviewed as drafts.
 */
function useLiveItem(review: Review): boolean {
  const engagement = useEngagement(review.kind === 'engagement' && review.status === 'pending' ? review.item_id : undefined);
  return review.kind === 'engagement' && engagement.data !== undefined && engagement.data.status !== 'draft';
}

/** A publisher approves or returns a pending request; a decided one shows who decided, when, and the note. */
export function Decision({ review }: { review: Review }) {
  const { t } = useTranslation();
  const f = useFormat();
  const approve = useApproveReview();
  const giveBack = useReturnReview();
  const canPublish = useCan('programs:publish');
  const live = useLiveItem(review);
  const form = useApiForm<{ note: string }>('returnReview', { defaultValues: { note: '' } });
  const kind = t(`reviews.kinds.${review.kind}`).toLowerCase();
  if (review.status === 'pending' && canPublish) {
    return (
      <Group gap="xs" wrap="nowrap">
        <ConfirmButton
          size="xs"
          label={t('reviews.approve')}
          aria-label={t('reviews.approveNamed', { name: review.item_name })}
          title={t('reviews.approveTitle', { name: review.item_name })}
          message={t(live ? 'reviews.approveLiveMessage' : 'reviews.approveMessage', { kind })}
          confirmLabel={t('reviews.approve')}
          destructive={false}
          onConfirm={() => approve.mutateAsync(review.id)}
        />
        <FormDialog
          form={form}
          label={t('reviews.return')}
          buttonLabel={t('reviews.returnNamed', { name: review.item_name })}
          title={t('reviews.returnTitle', { name: review.item_name })}
          message={t(live ? 'reviews.returnLiveMessage' : 'reviews.returnMessage', { kind })}
          confirmLabel={t('reviews.return')}
          onSubmit={(values) => giveBack.mutateAsync({ id: review.id, note: values.note.trim() })}
        >
          <Textarea label={t('reviews.returnNote')} autosize minRows={2} {...form.field('note', { required: true })} />
        </FormDialog>
      </Group>
    );
  }
  if (review.status === 'pending') return null;
  return (
    <Stack gap={2}>
      <Text size="sm">
        {t('reviews.decidedAt', {
          status: t(`reviews.statuses.${review.status}`),
          who: review.decided_by?.email ?? review.decided_by?.id ?? '',
          when: f.dateTime(review.decided_at),
        })}
      </Text>
      {review.decision_note && <Text size="sm">{review.decision_note}</Text>}
    </Stack>
  );
}
