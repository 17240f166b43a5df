import { Anchor, Stack } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useContest } from '../../../hooks/api/contests';
import { useTenant } from '../../../hooks/api/settings';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading } from '../../../components/loading';
import { ContestForm } from './contest-form';

export function ContestEdit() {
  const { t } = useTranslation();
  const contestId = useParams().contestId;
  const navigate = useNavigate();
  const contest = useContest(contestId);
  // The form's times are in the tenant's zone: it waits for the zone before it fills itself.
  const tenant = useTenant();
  if ((contestId && contest.isPending) || tenant.isPending) return <Loading />;
  if (contestId && contest.error) return <ErrorAlert error={contest.error} />;
  const existing = contest.data;
  const detailPath = (id: string) => `/competitions/contests/${encodeURIComponent(id)}`;
  return (
    <Stack>
      <Anchor component={Link} to={existing ? detailPath(existing.id) : '/competitions/contests'}>
        {existing ? t('contests.backToContest') : t('contests.back')}
      </Anchor>
      <PageHeader title={existing ? t('contests.editTitle', { title: existing.title }) : t('contests.new')} />
      <ContestForm existing={existing} onSaved={(saved) => navigate(detailPath(saved.id))} />
    </Stack>
  );
}
