import { Anchor, Card, List, Stack, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useChallenge } from '../../../hooks/api/challenges';
import { useTenant } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading } from '../../../components/loading';
import { useFormat } from '../../../lib/format';
import { StatusBadge } from '../common/status-badge';
import { useActorName } from '../common/actor';
import { ChallengePublication } from './challenge-publication';
import { ChallengeForm } from './challenge-form';

export function ChallengeEdit() {
  const { t } = useTranslation();
  const challengeId = useParams().challengeId;
  const navigate = useNavigate();
  const challenge = useChallenge(challengeId);
  // The form's times are in the tenant's zone: it waits for the zone before it fills itself.
  const tenant = useTenant();
  const f = useFormat();
  const who = useActorName();
  if ((challengeId && challenge.isPending) || tenant.isPending) return <Loading />;
  if (challengeId && challenge.error) return <ErrorAlert error={challenge.error} />;
  const existing = challenge.data;
  return (
    <Stack>
      <Anchor component={Link} to="/competitions/challenges">
        {t('challenges.back')}
      </Anchor>
      <PageHeader title={existing ? existing.name : t('challenges.new')}>
        {existing && <StatusBadge status={existing.status} />}
        {existing && <ChallengePublication challenge={existing} />}
      </PageHeader>
      <ChallengeForm
        key={`${existing?.id ?? 'new'}:${existing?.status ?? ''}`}
        existing={existing}
        onSaved={(saved) => {
          // The same screen shows the new challenge.
          if (!challengeId) navigate(`/competitions/challenges/${saved.id}`);
        }}
      />
      {existing && existing.status_moves.length > 0 && (
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('challenges.history')}
          </Title>
          <List data-testid="challenge-history">
            {existing.status_moves.map((move, index) => (
              <List.Item key={index}>{t('challenges.move', { from: move.from_status ?? '—', to: move.to_status, by: who(move.moved_by), at: f.dateTime(move.moved_at) })}</List.Item>
            ))}
          </List>
        </Card>
      )}
    </Stack>
  );
}
