import { useMemo, useState } from 'react';
import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Card, Group, Loader, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useOverview, type Overview as OverviewData } from '../../hooks/api/analytics';
import { ErrorAlert } from '../../components/error-alert';
import { PageHeader } from '../../components/page-header';
import { Loading, ScrollTable } from '../../components/loading';

const RANGES = ['7', '30', '90'] as const;
/** The charts are pictures for sighted readers (hidden from assistive technology); their figures are in the table beside each. So they take no keyboard focus either. */
const NOT_FOCUSABLE = { accessibilityLayer: false, tabIndex: -1 };

function isoDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function Stat({ label, value }: { label: string; value: number | string }) {
  return (
    <Card withBorder padding="md">
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl" data-testid={`stat-${label}`}>
        {typeof value === 'number' ? value.toLocaleString() : value}
      </Text>
    </Card>
  );
}

/** A chart with its figures also as a table, for screen readers and for reading exact values. */
function ChartCard({ title, children, data, series }: { title: string; children: React.ReactNode; data: OverviewData['days']; series: Array<{ name: keyof OverviewData['days'][number]; label: string }> }) {
  const { t } = useTranslation();
  return (
    <Card withBorder padding="md" component="figure" m={0} aria-label={title}>
      <Title order={2} size="h4" mb="sm" component="figcaption">
        {title}
      </Title>
      <div aria-hidden="true">{children}</div>
      <details>
        <summary>{t('overview.asTable')}</summary>
        <ScrollTable minWidth={300}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('overview.date')}</Table.Th>
                {series.map((s) => (
                  <Table.Th key={s.name}>{s.label}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {data.map((day) => (
                <Table.Tr key={day.date}>
                  <Table.Td>{day.date}</Table.Td>
                  {series.map((s) => (
                    <Table.Td key={s.name}>{day[s.name]}</Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      </details>
    </Card>
  );
}

export function Overview() {
  const { t } = useTranslation();
  const [days, setDays] = useState<(typeof RANGES)[number]>('30');
  const range = useMemo(() => {
    const to = new Date();
    const from = new Date(to.getTime() - (Number(days) - 1) * 86_400_000);
    return { from: isoDay(from), to: isoDay(to) };
  }, [days]);
  const overview = useOverview(range);
  const data = overview.data;
  const points = [
    { name: 'points_issued' as const, label: t('overview.pointsIssued'), color: 'blue.8' },
    { name: 'points_redeemed' as const, label: t('overview.pointsRedeemed'), color: 'teal.8' },
    { name: 'points_expired' as const, label: t('overview.pointsExpired'), color: 'orange.8' },
  ];
  const events = [
    { name: 'events_ingested' as const, label: t('overview.eventsIngested'), color: 'indigo.7' },
    { name: 'events_rejected' as const, label: t('overview.eventsRejected'), color: 'red.8' },
  ];
  const webhooks = [
    { name: 'webhooks_succeeded' as const, label: t('overview.webhooksSucceeded'), color: 'green.8' },
    { name: 'webhooks_failed' as const, label: t('overview.webhooksFailed'), color: 'red.8' },
  ];
  const active = [{ name: 'active_participants' as const, label: t('overview.activeParticipants'), color: 'violet.8' }];
  return (
    <Stack>
      <PageHeader title={t('overview.title')}>
        <SegmentedControl
          aria-label={t('overview.range')}
          value={days}
          onChange={(value) => setDays(value as (typeof RANGES)[number])}
          data={RANGES.map((value) => ({ value, label: t('overview.lastDays', { count: Number(value) }) }))}
        />
      </PageHeader>
      <ErrorAlert error={overview.error} />
      {overview.isPending && <Loading />}
      {data && (
        <>
          <Text size="sm" c="dimmed">
            {t('overview.period', { from: data.from, to: data.to, timezone: data.timezone })}
          </Text>
          <SimpleGrid cols={{ base: 2, md: 4 }}>
            <Stat label={t('overview.pointsIssued')} value={data.totals.points_issued} />
            <Stat label={t('overview.pointsRedeemed')} value={data.totals.points_redeemed} />
            <Stat label={t('overview.outstanding')} value={data.liability.outstanding_points} />
            <Stat label={t('overview.withBalance')} value={data.liability.participants_with_balance} />
          </SimpleGrid>
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            <ChartCard title={t('overview.pointsChart')} data={data.days} series={points}>
              <AreaChart h={220} data={data.days} dataKey="date" series={points} curveType="linear" withLegend areaChartProps={NOT_FOCUSABLE} />
            </ChartCard>
            <ChartCard title={t('overview.activeChart')} data={data.days} series={active}>
              <LineChart h={220} data={data.days} dataKey="date" series={active} curveType="linear" lineChartProps={NOT_FOCUSABLE} />
            </ChartCard>
            <ChartCard title={t('overview.eventsChart')} data={data.days} series={events}>
              <BarChart h={220} data={data.days} dataKey="date" series={events} withLegend barChartProps={NOT_FOCUSABLE} />
            </ChartCard>
            <ChartCard title={t('overview.webhooksChart')} data={data.days} series={webhooks}>
              <BarChart h={220} data={data.days} dataKey="date" series={webhooks} type="stacked" withLegend barChartProps={NOT_FOCUSABLE} />
            </ChartCard>
          </SimpleGrid>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('overview.topRules')}
            </Title>
            {data.top_rules.length === 0 ? (
              <Text c="dimmed">{t('overview.noRules')}</Text>
            ) : (
              <ScrollTable minWidth={300}>
                <Table>
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>{t('overview.rule')}</Table.Th>
                      <Table.Th>{t('overview.points')}</Table.Th>
                      <Table.Th>{t('overview.events')}</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {data.top_rules.map((rule) => (
                      <Table.Tr key={rule.rule_id}>
                        <Table.Td>{rule.name}</Table.Td>
                        <Table.Td>{rule.points.toLocaleString()}</Table.Td>
                        <Table.Td>{rule.events.toLocaleString()}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </ScrollTable>
            )}
          </Card>
          <Group>
            <Text size="xs" c="dimmed">
              {t('overview.liabilityAsOf', { at: new Date(data.liability.as_of).toLocaleString() })}
            </Text>
          </Group>
        </>
      )}
    </Stack>
  );
}
