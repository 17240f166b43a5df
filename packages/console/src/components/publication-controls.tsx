import { useState } from 'react';
import { Alert, Anchor, Badge, Group, Stack, Text, Textarea } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { registerStrings } from '../lib/area';
import { publicationStrings } from './publication-controls.strings';
import { publicationStringsDe } from './publication-controls.strings.de';
import { useCan } from './permission';
import { ConfirmButton } from './confirm-button';
import { useLatestReview, usePublicationAction, useSubmitReview, type PublicationAction, type ReviewKind } from '../hooks/api/reviews';

registerStrings(publicationStrings, publicationStringsDe);

export interface PublicationControlsProps {
  kind: ReviewKind;
  id: string;
  /** The item's status as its API names it (`draft`, `active`, `paused`, `published`, `scheduled` …). */
  status: string;
  name: string;
  /** An engagement's draft differs from what is published: it has something to publish or review. */
  hasUnpublishedChanges?: boolean;
  /** Why publishing directly must wait (the rule editor's backtest), shown instead of the action. */
  publishBlocked?: string | null;
}

/** The publisher's next lifecycle move for an item in this status, if any. */
function nextAction(kind: ReviewKind, status: string, unpublished: boolean): PublicationAction | null {
  if (status === 'draft' || (kind === 'engagement' && unpublished)) return 'publish';
  if (kind === 'rule') return status === 'active' ? 'pause' : status === 'paused' ? 'resume' : null;
  if (kind === 'engagement') return status === 'published' ? 'unpublish' : null;
  if (kind === 'challenge') return status === 'scheduled' || status === 'active' ? 'end' : null;
  return null;
}

/**
 * Publishing an item: people holding `programs:publish` see the lifecycle move
 * that fits (publish, pause, resume, unpublish, end); people who may only edit
 * drafts see "Submit for review", then the pending state, or the note of a
 * returned request. Every refusal shows the API's own detail.
 */
export function PublicationControls({ kind, id, status, name, hasUnpublishedChanges = false, publishBlocked = null }: PublicationControlsProps) {
  const { t } = useTranslation();
  const canPublish = useCan('programs:publish');
  const canWrite = useCan('programs:write');
  const latest = useLatestReview(kind, id);
  const submit = useSubmitReview();
  const publication = usePublicationAction(kind, id);
  const [note, setNote] = useState('');
  const unpublished = status === 'draft' || (kind === 'engagement' && hasUnpublishedChanges);
  const review = latest.data ?? null;
  const pending = review?.status === 'pending';
  const action = nextAction(kind, status, hasUnpublishedChanges);
  const who = (actor: { email: string | null; id: string } | null | undefined) => actor?.email ?? actor?.id ?? '';

  return (
    <Stack gap="xs" data-testid="publication-controls" aria-label={t('publication.label')} role="group">
      <Group gap="sm">
        {status === 'draft' && (
          <Badge color="gray.7" variant="filled">
            {t('publication.draft')}
          </Badge>
        )}
        {pending && (
          <Badge color="indigo.9" variant="filled" data-testid="review-pending">
            {t('publication.pending')}
          </Badge>
        )}
        {canPublish && action && (publishBlocked && action === 'publish' ? (
          <Text size="sm">{publishBlocked}</Text>
        ) : (
          <ConfirmButton
            label={t(`publication.${action}`)}
            title={t('publication.confirmTitle', { action: t(`publication.${action}`), name })}
            message={t(`publication.confirm.${action}`)}
            confirmLabel={t(`publication.${action}`)}
            destructive={action !== 'publish' && action !== 'resume'}
            onConfirm={() => publication.mutateAsync(action)}
          />
        ))}
        {canPublish && pending && (
          <Anchor component={Link} to="/reviews" size="sm">
            {t('publication.reviews')}
          </Anchor>
        )}
        {!canPublish && canWrite && unpublished && !pending && (
          <ConfirmButton
            label={t('publication.submit')}
            title={t('publication.submitTitle', { name })}
            message={t('publication.submitMessage')}
            confirmLabel={t('publication.submit')}
            destructive={false}
            onConfirm={async () => {
              await submit.mutateAsync({ kind, id, note: note.trim() || undefined });
              setNote('');
            }}
          >
            <Textarea label={t('publication.note')} value={note} maxLength={2000} onChange={(event) => setNote(event.currentTarget.value)} />
          </ConfirmButton>
        )}
      </Group>
      {pending && !canPublish && <Text size="sm">{t('publication.pendingSince', { who: who(review?.submitted_by) })}</Text>}
      {review?.status === 'returned' && unpublished && (
        <Alert color="orange" variant="light" role="status" data-testid="review-returned">
          {t('publication.returned', { who: who(review.decided_by), note: review.decision_note ?? '' })}
        </Alert>
      )}
      {!canPublish && canWrite && !unpublished && <Text size="sm">{t('publication.readOnly')}</Text>}
    </Stack>
  );
}
