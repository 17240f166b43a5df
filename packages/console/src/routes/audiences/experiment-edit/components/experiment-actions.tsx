import { useState } from 'react';
import { Alert, Anchor, Badge, Button, Card, Group, Select, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useExperimentAction, type Experiment, type Rollout } from '../../../../hooks/api/experiments';
import { ConfirmButton } from '../../../../components/confirm-button';
import { ErrorAlert } from '../../../../components/error-alert';
import { useCan } from '../../../../components/permission';
import { useFormat, ZoneNote } from '../../../../lib/format';

export const STATUS_COLORS: Record<Experiment['status'], string> = { draft: 'gray.7', running: 'teal.9', stopped: 'orange.9', ended: 'dark.5' };

/** Where the experiment stands and what can be done next: start a draft, stop a running one, roll out a variant (it goes to review), read the results. */
export function ExperimentActions({ experiment }: { experiment: Experiment }) {
  const { t } = useTranslation();
  const f = useFormat();
  const action = useExperimentAction(experiment.id);
  const canWrite = useCan('programs:write');
  /** Starting, stopping and rolling out put programs live or take them down: the publishing permission. */
  const canPublish = useCan('programs:publish');
  const canReadResults = useCan('analytics:read');
  const [variant, setVariant] = useState<string | null>(null);
  const { status } = experiment;
  const rollout = action.data && 'publication' in action.data ? (action.data as Rollout) : null;
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group gap="sm">
          <Badge color={STATUS_COLORS[status]} variant="filled" data-testid="experiment-status">
            {t(`experiments.statuses.${status}`)}
          </Badge>
          {experiment.started_at && <Text size="sm">{t('experiments.startedAt', { at: f.dateTime(experiment.started_at) })}</Text>}
          {experiment.ended_at && <Text size="sm">{t('experiments.endedAt', { at: f.dateTime(experiment.ended_at) })}</Text>}
          {status !== 'draft' && canReadResults && (
            <Anchor component={Link} to={`/experiments/${experiment.id}/results`}>
              {t('experiments.readResults')}
            </Anchor>
          )}
        </Group>
        {experiment.rolled_out_variant && (
          <Alert color="blue" variant="light" role="status" data-testid="rolled-out">
            {t(`experiments.rolledOut.${rollout?.publication ?? 'any'}`, { variant: experiment.rolled_out_variant })}{' '}
            {rollout?.publication !== 'published' && rollout?.publication !== 'already_live' && (
              <Anchor component={Link} to="/reviews" c="blue.9" fw={600}>
                {t('experiments.toReviews')}
              </Anchor>
            )}
          </Alert>
        )}
        {canPublish && (
          <Group align="flex-end">
            {(status === 'draft' || status === 'stopped') && (
              <Button onClick={() => action.mutate({ type: 'start' })} loading={action.isPending && action.variables?.type === 'start'}>
                {t('experiments.start')}
              </Button>
            )}
            {status === 'running' && (
              <ConfirmButton label={t('experiments.stop')} title={t('experiments.stopTitle')} message={t('experiments.stopConfirm')} confirmLabel={t('experiments.stop')} variant="default" onConfirm={() => action.mutateAsync({ type: 'stop' })} />
            )}
            {(status === 'running' || status === 'stopped') && (
              <>
                <Select
                  label={t('experiments.rolloutVariant')}
                  data={experiment.variants.map((v) => ({ value: v.key, label: `${v.name} (${v.key})` }))}
                  value={variant}
                  onChange={setVariant}
                  w={240}
                />
                <ConfirmButton
                  label={t('experiments.rollout')}
                  title={t('experiments.rolloutTitle')}
                  message={t('experiments.rolloutConfirm', { variant: variant ?? '' })}
                  confirmLabel={t('experiments.rollout')}
                  destructive={false}
                  disabled={!variant}
                  onConfirm={() => action.mutateAsync({ type: 'rollout', variant: variant! })}
                />
              </>
            )}
          </Group>
        )}
        {canWrite && !canPublish && status !== 'ended' && (
          <Text size="sm" data-testid="needs-publish">
            {t('experiments.needsPublish')}
          </Text>
        )}
        {(status === 'running' || status === 'stopped') && canPublish && (
          <Text size="xs" c="dimmed">
            {t('experiments.rolloutHelp')}
          </Text>
        )}
        <ErrorAlert error={action.error} />
        {(experiment.started_at || experiment.ended_at) && <ZoneNote />}
      </Stack>
    </Card>
  );
}
