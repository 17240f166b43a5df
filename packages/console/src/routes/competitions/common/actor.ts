import { useTranslation } from 'react-i18next';
import { useCurrentUser } from '../../../components/permission';

/**
 * How a recorded actor reads: the API names a console user by id (`<id>` or
 * `admin:<id>`); the signed-in person's own moves and decisions read as theirs
 * ("you (ann@example.com)"), anything else as recorded.
 */
export function useActorName(): (actor: string | null) => string {
  const { t } = useTranslation();
  const { user } = useCurrentUser();
  return (actor) => (actor === null ? '—' : actor === user.id || actor === `admin:${user.id}` ? t('competitions.you', { email: user.email }) : actor);
}
