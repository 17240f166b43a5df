import { Badge, VisuallyHidden } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useWaitingReviews } from '../../hooks/api/reviews';
import { useCan, useCurrentUser } from '../../components/permission';

/**
 * Beside the Reviews link: how many pending requests wait for the signed-in
 * person (a publisher, for requests others submitted). Nothing when none do,
 * or when the person cannot decide any.
 */
export function WaitingReviewsCount() {
  const { t } = useTranslation();
  const { user } = useCurrentUser();
  const canPublish = useCan('programs:publish');
  const waiting = useWaitingReviews(user.id, canPublish);
  const count = waiting.data?.count ?? 0;
  if (!canPublish || count === 0) return null;
  return (
    <>
      <Badge color="red.9" variant="filled" size="sm" aria-hidden data-testid="reviews-waiting">
        {waiting.data?.more ? '99+' : count}
      </Badge>
      <VisuallyHidden>{t('nav.waiting', { count })}</VisuallyHidden>
    </>
  );
}
