import { Alert, Anchor, Badge, Card, Group, List, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useExperiment, useExperimentResults, type Interval, type VariantResult } from '../../../hooks/api/experiments';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote, type Format } from '../../../lib/format';
import { STATUS_COLORS } from '../experiment-edit/components/experiment-actions';
import { IntervalChart, scaleOf } from './components/interval-chart';

/** A signed figure: "+0.42", "−0.10", "0". */
function signed(f: Format, value: number, digits = 2): string {
  const rounded = Number(value.toFixed(digits));
  const text = f.number(Math.abs(rounded));
  return rounded > 0 ? `+${text}` : rounded < 0 ? `−${text}` : text;
}

function percent(f: Format, value: number): string {
  return `${signed(f, value * 100, 1)}%`;
}

/**
 * An experiment's results as an analyst reads them: per variant, those
 * exposed, the goal per participant, what it cost, and the difference to
 * control with its 95% interval, drawn and said in words; the service's own
 * sentence for each variant and its warnings.
 */
export function ExperimentResults() {
  const { t } = useTranslation();
  const f = useFormat();
  const experimentId = useParams().experimentId!;
  const experiment = useExperiment(experimentId);
  const results = useExperimentResults(experimentId);
  const variants = results.data?.variants ?? [];
  const intervals = variants.flatMap((v) => (v.difference ? [v.difference.absolute] : []));
  const scale = scaleOf(intervals);
  const intervalWords = (v: VariantResult, interval: Interval) =>
    t('experimentResults.intervalText', {
      variant: v.name,
      estimate: signed(f, interval.estimate),
      low: signed(f, interval.low),
      high: signed(f, interval.high),
    });
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
      {(results.data?.warnings ?? []).length > 0 && (
        <Alert color="yellow" variant="light" title={t('experimentResults.warnings')} data-testid="results-warnings">
          <List size="sm">
            {results.data!.warnings.map((warning) => (
              <List.Item key={warning}>{warning}</List.Item>
            ))}
          </List>
        </Alert>
      )}
      {results.data && (
        <Card withBorder>
          <Stack>
            <Title order={2} size="h4">
              {t('experimentResults.perVariant')}
            </Title>
            <ScrollTable minWidth={900}>
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
                  {variants.map((v) => (
                    <Table.Tr key={v.key} data-testid={`result-${v.key}`}>
                      <Table.Th scope="row">
                        {v.name}
                        {v.control && (
                          <Text size="xs" c="dimmed">
                            {t('experimentResults.control')}
                          </Text>
                        )}
                      </Table.Th>
                      <Table.Td>{f.number(v.exposed)}</Table.Td>
                      <Table.Td>
                        {f.number(Number(v.goal_per_participant.toFixed(2)))}
                        <Text size="xs" c="dimmed">
                          {t('experimentResults.goalTotal', { total: f.number(v.goal_total) })}
                        </Text>
                      </Table.Td>
                      <Table.Td>{f.number(v.points_cost)}</Table.Td>
                      <Table.Td>{f.number(v.rewards_cost)}</Table.Td>
                      <Table.Td>
                        {v.difference ? (
                          <>
                            <Text size="sm">{t('experimentResults.absolute', { estimate: signed(f, v.difference.absolute.estimate), low: signed(f, v.difference.absolute.low), high: signed(f, v.difference.absolute.high) })}</Text>
                            {v.difference.relative && (
                              <Text size="xs" c="dimmed">
                                {t('experimentResults.relative', { estimate: percent(f, v.difference.relative.estimate), low: percent(f, v.difference.relative.low), high: percent(f, v.difference.relative.high) })}
                              </Text>
                            )}
                          </>
                        ) : (
                          '—'
                        )}
                      </Table.Td>
                      <Table.Td>{v.difference ? <IntervalChart interval={v.difference.absolute} scale={scale} label={intervalWords(v, v.difference.absolute)} /> : '—'}</Table.Td>
                      <Table.Td>{v.cost_per_extra_goal === null ? '—' : f.number(Math.round(v.cost_per_extra_goal))}</Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </ScrollTable>
            {intervals.length > 0 && (
              <Group gap="xs">
                <Text size="xs" c="dimmed">
                  {t('experimentResults.chartKey', { min: signed(f, scale.min), max: signed(f, scale.max) })}
                </Text>
              </Group>
            )}
          </Stack>
        </Card>
      )}
      {variants.some((v) => v.sentence) && (
        <Card withBorder>
          <Title order={2} size="h4" mb="xs">
            {t('experimentResults.inWords')}
          </Title>
          <List data-testid="results-sentences">
            {variants.flatMap((v) => (v.sentence ? [<List.Item key={v.key}>{v.sentence}</List.Item>] : []))}
          </List>
        </Card>
      )}
      {results.data && (
        <>
          <Text size="xs" c="dimmed">
            {t('experimentResults.asOf', { at: f.dateTime(results.data.as_of) })}
          </Text>
          <ZoneNote />
        </>
      )}
    </Stack>
  );
}
