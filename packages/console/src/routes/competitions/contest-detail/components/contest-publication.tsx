import { useTranslation } from 'react-i18next';
import { usePublishContest, type Contest } from '../../../../hooks/api/contests';
import { ConfirmButton } from '../../../../components/confirm-button';
import { RoleGuard } from '../../../../components/permission';

/**
 * Publishing a draft contest (draft → scheduled), in one component so that a
 * publishing flow with review can replace it. Later moves are the server's.
 */
export function ContestPublication({ contest }: { contest: Contest }) {
  const { t } = useTranslation();
  const publish = usePublishContest();
  if (contest.status !== 'draft') return null;
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
