import { Alert, Anchor, Badge, Card, List, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useExperiment, useExperimentResults, type Difference } from '../../../hooks/api/experiments';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { STATUS_COLORS } from '../experiment-edit/components/experiment-actions';
import { scaleOf } from './components/interval-chart';
import { ResultRow, signed } from './components/result-row';

/**
 * An experiment's results as an analyst reads them: per variant, those
 * exposed, the goal per participant, what it cost, and the difference to
 * control with its 95% interval, drawn and said in words; the service's own
 * sentence for each, and what to read with care.
 */
export function ExperimentResults() {
  const { t } = useTranslation();
  const f = useFormat();
  const experimentId = useParams().experimentId!;
  const experiment = useExperiment(experimentId);
  const results = useExperimentResults(experimentId);
  const data = results.data;
  const arms = data ? [...data.variants, ...(data.holdout ? [data.holdout] : [])] : [];
  const differences = arms.flatMap((arm): Difference[] => (arm.difference ? [arm.difference] : []));
  const scale = scaleOf(differences);
  const warned = arms.some((arm) => arm.warnings.length > 0);
  return (
    <Stack>
      <Anchor component={Link} to={`/experiments/${experimentId}`} size="sm">
        ← {experiment.data?.name ?? t('experiments.title')}
      </Anchor>
      <PageHeader title={t('experimentResults.title', { name: experiment.data?.name ?? '' })}>
        {experiment.data && (
          <Badge color={STATUS_COLORS[experiment.data.status]} variant="filled">
            {t(`experiments.statuses.${experiment.data.status}`)}
          </Badge>
        )}
      </PageHeader>
      <ErrorAlert error={experiment.error ?? results.error} />
      {results.isPending && <Loading />}
      {warned && (
        <Alert color="yellow" variant="light" title={t('experimentResults.warnings')} data-testid="results-warnings">
          <Text size="sm">{t('experimentResults.warningsHelp')}</Text>
        </Alert>
      )}
      {data && (
        <Card withBorder>
          <Stack>
            <Title order={2} size="h4">
              {t('experimentResults.perVariant')}
            </Title>
            <ScrollTable minWidth={960}>
              <Table data-testid="results" verticalSpacing="sm">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>{t('experimentResults.variant')}</Table.Th>
                    <Table.Th>{t('experimentResults.exposed')}</Table.Th>
                    <Table.Th>{t('experimentResults.goalPerParticipant')}</Table.Th>
                    <Table.Th>{t('experimentResults.pointsCost')}</Table.Th>
                    <Table.Th>{t('experimentResults.rewardsCost')}</Table.Th>
                    <Table.Th>{t('experimentResults.difference')}</Table.Th>
                    <Table.Th>{t('experimentResults.interval')}</Table.Th>
                    <Table.Th>{t('experimentResults.costPerExtra')}</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {data.variants.map((arm) => (
                    <ResultRow key={arm.key} arm={arm} role={arm.control ? 'control' : 'variant'} scale={scale} f={f} />
                  ))}
                  {data.holdout && <ResultRow arm={data.holdout} role="holdout" scale={scale} f={f} />}
                </Table.Tbody>
              </Table>
            </ScrollTable>
            {differences.length > 0 && (
              <Text size="xs" c="dimmed">
                {t('experimentResults.chartKey', { min: signed(f, scale.min), max: signed(f, scale.max) })}
              </Text>
            )}
          </Stack>
        </Card>
      )}
      {data && (
        <Card withBorder>
          <Title order={2} size="h4" mb="xs">
            {t('experimentResults.inWords')}
          </Title>
          <List data-testid="results-sentences">
            {arms.map((arm) => (
              <List.Item key={arm.key}>{arm.sentence}</List.Item>
            ))}
          </List>
          <Text size="xs" c="dimmed" mt="sm">
            {t('experimentResults.method')}
          </Text>
        </Card>
      )}
      {data && (
        <>
          <Text size="xs" c="dimmed">
            {t('experimentResults.asOf', { at: f.dateTime(data.window_end) })}
          </Text>
          <ZoneNote />
        </>
      )}
    </Stack>
  );
}
