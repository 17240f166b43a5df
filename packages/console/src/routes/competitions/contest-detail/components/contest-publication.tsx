import { useTranslation } from 'react-i18next';
import { usePublishContest, type Contest } from '../../../../hooks/api/contests';
import { ConfirmButton } from '../../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../../components/permission';
import { PublicationControls } from '../../../../components/publication-controls';

/**
 * Publishing a draft contest (draft → scheduled), in one component so that a
 * publishing flow with review can replace it (drafts-only marketers get the
 * review request). Later moves are the server's.
 */
export function ContestPublication({ contest }: { contest: Contest }) {
  const { t } = useTranslation();
  const publish = usePublishContest();
  const canPublish = useCan('programs:publish');
  if (contest.status !== 'draft') return null;
  // Without the publishing permission the draft goes to a publisher through a review request.
  if (!canPublish) {
    return (
      <RoleGuard permission="programs:write">
        <PublicationControls kind="contest" id={contest.id} status={contest.status} name={contest.title} />
      </RoleGuard>
    );
  }
  return (
    <RoleGuard permission="programs:publish">
      <ConfirmButton
        label={t('contests.publish')}
        title={t('contests.publishTitle')}
        message={t('contests.publishConfirm', { title: contest.title })}
        confirmLabel={t('contests.publish')}
        destructive={false}
        onConfirm={() => publish.mutateAsync(contest.id)}
      />
    </RoleGuard>
  );
}
