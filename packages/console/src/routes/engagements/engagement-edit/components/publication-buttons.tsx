import { Badge, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ConfirmButton } from '../../../../components/confirm-button';
import { useCan } from '../../../../components/permission';
import { usePublication, type Engagement } from '../../../../hooks/api/engagements';
import { PublicationControls } from '../../../../components/publication-controls';

/**
 * Publish and unpublish, each behind a confirmation, for a publisher; for a
 * drafts-only marketer the review request of the publishing flow
 * (`publication-controls.tsx`).
 */
export function PublicationButtons({ engagement }: { engagement: Engagement }) {
  const { t } = useTranslation();
  const canPublish = useCan('programs:publish');
  const canWrite = useCan('programs:write');
  const { publish, unpublish } = usePublication(engagement.id);
  const published = engagement.status === 'published';
  const throughReview = !canPublish && canWrite && (!published || engagement.has_unpublished_changes);
  return (
    <Group gap="xs">
      {/* The review request's controls show a draft's status themselves. */}
      {!(throughReview && !published) && (
        <Badge color={published ? 'teal.9' : 'gray.7'} variant="filled" data-testid="engagement-status">
          {t(`engagements.status.${engagement.status}`)}
        </Badge>
      )}
      {engagement.has_unpublished_changes && published && (
        <Badge color="yellow.9" variant="filled">
          {t('engagements.unpublishedChanges')}
        </Badge>
      )}
      {canPublish && (!published || engagement.has_unpublished_changes) && (
        <ConfirmButton
          destructive={false}
          label={published ? t('engagements.publishChanges') : t('engagements.publish')}
          title={t('engagements.publishTitle')}
          message={t('engagements.publishConfirm', { name: engagement.name, site: engagement.site_slug })}
          confirmLabel={t('engagements.publish')}
          onConfirm={() => publish.mutateAsync()}
        />
      )}
      {throughReview && (
        // Without the publishing permission the draft goes to a publisher through a review request.
        <PublicationControls kind="engagement" id={engagement.id} status={engagement.status} name={engagement.name} hasUnpublishedChanges={engagement.has_unpublished_changes} />
      )}
      {canPublish && published && (
        <ConfirmButton
          variant="outline"
          label={t('engagements.unpublish')}
          title={t('engagements.unpublishTitle')}
          message={t('engagements.unpublishConfirm', { name: engagement.name, site: engagement.site_slug })}
          confirmLabel={t('engagements.unpublish')}
          onConfirm={() => unpublish.mutateAsync()}
        />
      )}
    </Group>
  );
}
