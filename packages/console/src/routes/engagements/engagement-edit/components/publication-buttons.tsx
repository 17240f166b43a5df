import { Badge, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ConfirmButton } from '../../../../components/confirm-button';
import { useCan } from '../../../../components/permission';
import { usePublication, type Engagement } from '../../../../hooks/api/engagements';

/**
 * Publish and unpublish, each behind a confirmation. Kept in this one file so
 * that the review flow (draft → review → published, `publication-controls.tsx`)
 * can take its place without touching the editor.
 */
export function PublicationButtons({ engagement }: { engagement: Engagement }) {
  const { t } = useTranslation();
  const canPublish = useCan('programs:publish');
  const { publish, unpublish } = usePublication(engagement.id);
  const published = engagement.status === 'published';
  return (
    <Group gap="xs">
      <Badge color={published ? 'teal.9' : 'gray.7'} variant="filled" data-testid="engagement-status">
        {t(`engagements.status.${engagement.status}`)}
      </Badge>
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
