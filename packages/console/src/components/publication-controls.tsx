import { useState, type ReactNode } from 'react';
import { Alert, Anchor, Badge, Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core';
import type { FieldValues } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { registerStrings } from '../lib/area';
import { publicationStrings } from './publication-controls.strings';
import { publicationStringsDe } from './publication-controls.strings.de';
import { useCan } from './permission';
import { ConfirmButton } from './confirm-button';
import { useLatestBacktest, useLatestReview, usePublicationAction, useSubmitReview, type PublicationAction, type ReviewBacktest, type ReviewKind } from '../hooks/api/reviews';
import { FormErrors, useApiForm, type ApiForm } from '../lib/forms';
import { useFormat } from '../lib/format';

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
 * A button that opens a dialog holding a form of one API operation (lib/forms):
 * the submit review and return dialogs. Refusals land on their fields; the
 * dialog closes when the action succeeds, and forgets its refusal when closed.
 */
export function FormDialog<T extends FieldValues>({
  form,
  label,
  buttonLabel,
  title,
  message,
  confirmLabel,
  onSubmit,
  children,
}: {
  form: ApiForm<T>;
  label: string;
  buttonLabel?: string;
  title: string;
  message: ReactNode;
  confirmLabel: string;
  onSubmit: (values: T) => Promise<unknown>;
  children?: ReactNode;
}) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const close = () => {
    setOpen(false);
    form.clearRefusal();
    form.clearErrors();
  };
  return (
    <>
      <Button size="xs" variant="default" aria-label={buttonLabel} onClick={() => setOpen(true)}>
        {label}
      </Button>
      <Modal opened={open} onClose={close} title={title} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <form
          noValidate
          onSubmit={form.submit(async (values) => {
            await onSubmit(values);
            form.reset();
            setOpen(false);
          })}
        >
          <Stack>
            <Text>{message}</Text>
            {children}
            <FormErrors form={form} />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                {t('common.cancel')}
              </Button>
              <Button type="submit" loading={form.formState.isSubmitting}>
                {confirmLabel}
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </>
  );
}

/** A rule's backtest in one sentence, as the publisher reads it on the review and the author before submitting. */
export function BacktestSummary({ backtest }: { backtest: ReviewBacktest }) {
  const { t } = useTranslation();
  const f = useFormat();
  return (
    <Text size="sm" data-testid="review-backtest">
      {t('publication.backtest', {
        from: f.date(backtest.from),
        to: f.date(backtest.to),
        matched: f.number(backtest.events_matched),
        scanned: f.number(backtest.events_scanned),
        participants: f.number(backtest.participants),
        points: f.number(backtest.points),
      })}
      {backtest.capped_events > 0 && ` ${t('publication.backtestCapped', { count: backtest.capped_events })}`}
      {backtest.truncated && ` ${t('publication.backtestTruncated')}`}
    </Text>
  );
}

/** "Submit for review": the author's note, and for a rule the latest backtest they ran, attached for the publisher. */
function SubmitForReview({ kind, id, name }: { kind: ReviewKind; id: string; name: string }) {
  const { t } = useTranslation();
  const submit = useSubmitReview();
  const backtest = useLatestBacktest(id, name);
  const form = useApiForm<{ note: string }>('createReview', { defaultValues: { note: '' } });
  return (
    <FormDialog
      form={form}
      label={t('publication.submit')}
      title={t('publication.submitTitle', { name })}
      message={t('publication.submitMessage')}
      confirmLabel={t('publication.submit')}
      onSubmit={(values) => submit.mutateAsync({ kind, id, note: values.note.trim() || undefined, backtest: kind === 'rule' && backtest ? backtest : undefined })}
    >
      <Textarea label={t('publication.note')} autosize minRows={2} {...form.field('note')} />
      {kind === 'rule' &&
        (backtest ? (
          <Stack gap={2}>
            <Text size="sm" fw={700}>
              {t('publication.backtestAttached')}
            </Text>
            <BacktestSummary backtest={backtest} />
          </Stack>
        ) : (
          <Text size="sm">{t('publication.noBacktest')}</Text>
        ))}
    </FormDialog>
  );
}

/**
 * Publishing an item: people holding `programs:publish` see the lifecycle move
 * that fits (publish, pause, resume, unpublish, end); publishing while a
 * review request waits closes that request (the service records it as
 * published directly). People who may only edit drafts see "Submit for
 * review", then the pending state, or the note of a returned request. Every
 * refusal shows the API's own detail.
 */
export function PublicationControls({ kind, id, status, name, hasUnpublishedChanges = false, publishBlocked = null }: PublicationControlsProps) {
  const { t } = useTranslation();
  const canPublish = useCan('programs:publish');
  const canWrite = useCan('programs:write');
  const latest = useLatestReview(kind, canWrite ? id : undefined);
  const publication = usePublicationAction(kind, id);
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
            message={
              <>
                {t(`publication.confirm.${action}`)}
                {pending && action === 'publish' && ` ${t('publication.closesReview', { who: who(review?.submitted_by) })}`}
              </>
            }
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
        {!canPublish && canWrite && unpublished && !pending && <SubmitForReview kind={kind} id={id} name={name} />}
      </Group>
      {pending && !canPublish && <Text size="sm">{t('publication.pendingSince', { who: who(review?.submitted_by) })}</Text>}
      {pending && canPublish && review?.backtest && <BacktestSummary backtest={review.backtest} />}
      {review?.status === 'returned' && unpublished && (
        <Alert color="orange" variant="light" role="status" data-testid="review-returned">
          {t('publication.returned', { who: who(review.decided_by), note: review.decision_note ?? '' })}
        </Alert>
      )}
      {!canPublish && canWrite && !unpublished && <Text size="sm">{t('publication.readOnly')}</Text>}
    </Stack>
  );
}
