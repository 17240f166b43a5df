import { useMemo, useState } from 'react';
import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Card, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useOverview, type Overview as OverviewData, type OverviewDay } from '../../hooks/api/analytics';
import { ErrorAlert } from '../../components/error-alert';
import { PageHeader } from '../../components/page-header';
import { Loading, ScrollTable } from '../../components/loading';
import { useFormat, ZoneNote } from '../../lib/format';
import { ChartCard, COUNT_AXIS, NOT_FOCUSABLE, type Series } from './components/chart-card';
import { MoneyCard } from './components/money-card';

const RANGES = ['7', '30', '90', '365'] as const;
const DAY_MS = 86_400_000;

/** The day `days - 1` before `to` (both YYYY-MM-DD calendar days of the tenant). */
function daysBefore(to: string, days: number): string {
  return new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * DAY_MS).toISOString().slice(0, 10);
}

function Stat({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <Card withBorder padding="md">
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl" data-testid={testId}>
        {value}
      </Text>
    </Card>
  );
}

type LiabilityDay = OverviewData['liability']['history'][number];
type ForecastMonth = OverviewData['expiry_forecast']['months'][number];

export function Overview() {
  const { t } = useTranslation();
  const f = useFormat();
  const [days, setDays] = useState<(typeof RANGES)[number]>('30');
  // The range ends today in the tenant's zone, whatever the browser's.
  const today = f.date(new Date().toISOString());
  const range = useMemo(() => ({ from: daysBefore(today, Number(days)), to: today }), [today, days]);
  const overview = useOverview(range);
  const data = overview.data;
  const count = (value: number | null) => f.number(value);
  const points: Array<Series<OverviewDay>> = [
    { name: 'points_issued', label: t('overview.pointsIssued'), color: 'blue.8' },
    { name: 'points_redeemed', label: t('overview.pointsRedeemed'), color: 'teal.8' },
    { name: 'points_expired', label: t('overview.pointsExpired'), color: 'orange.8' },
  ];
  const events: Array<Series<OverviewDay>> = [
    { name: 'events_ingested', label: t('overview.eventsIngested'), color: 'indigo.7' },
    { name: 'events_rejected', label: t('overview.eventsRejected'), color: 'red.8' },
  ];
  const webhooks: Array<Series<OverviewDay>> = [
    { name: 'webhooks_succeeded', label: t('overview.webhooksSucceeded'), color: 'green.8' },
    { name: 'webhooks_failed', label: t('overview.webhooksFailed'), color: 'red.8' },
  ];
  const active: Array<Series<OverviewDay>> = [{ name: 'active_participants', label: t('overview.activeParticipants'), color: 'violet.8' }];
  return (
    <Stack>
      <PageHeader title={t('overview.title')}>
        <SegmentedControl
          size="xs"
          aria-label={t('overview.range')}
          title={t('overviewRange.daysLabel', { count: Number(days) })}
          value={days}
          onChange={(value) => setDays(value as (typeof RANGES)[number])}
          // Short labels ("30 days"), so the four fit a phone's width; the control's name says they are the last days.
          data={RANGES.map((value) => ({ value, label: t('overviewRange.days', { count: Number(value) }) }))}
        />
      </PageHeader>
      <ErrorAlert error={overview.error} />
      {overview.isPending && <Loading />}
      {data && <Figures data={data} points={points} events={events} webhooks={webhooks} active={active} count={count} />}
    </Stack>
  );
}

function Figures({
  data,
  points,
  events,
  webhooks,
  active,
  count,
}: {
  data: OverviewData;
  points: Array<Series<OverviewDay>>;
  events: Array<Series<OverviewDay>>;
  webhooks: Array<Series<OverviewDay>>;
  active: Array<Series<OverviewDay>>;
  count: (value: number | null) => string;
}) {
  const { t } = useTranslation();
  const f = useFormat();
  const inMoney = data.point_value !== null;
  const money = (value: number | null) => f.money(value, data.currency);
  const liabilitySeries: Array<Series<LiabilityDay>> = inMoney
    ? [{ name: 'outstanding_value', label: t('money.liabilityMoney', { currency: data.currency }), color: 'grape.8' }]
    : [{ name: 'outstanding_points', label: t('money.liabilityPoints'), color: 'grape.8' }];
  const forecastPoints: Series<ForecastMonth> = { name: 'points', label: t('money.expiringPoints'), color: 'orange.8' };
  const forecastValue: Series<ForecastMonth> = { name: 'value', label: t('money.expiringValue'), color: 'orange.8' };
  const forecast = data.expiry_forecast;
  return (
    <>
      <Group gap="md">
        <Text size="sm" c="dimmed">
          {t('overview.period', { from: data.from, to: data.to, timezone: data.timezone })}
        </Text>
        <ZoneNote />
      </Group>
      <SimpleGrid cols={{ base: 2, md: 4 }}>
        <Stat label={t('overview.pointsIssued')} value={count(data.totals.points_issued)} testId="stat-points-issued" />
        <Stat label={t('overview.pointsRedeemed')} value={count(data.totals.points_redeemed)} testId="stat-points-redeemed" />
        <Stat label={t('overview.outstanding')} value={count(data.liability.outstanding_points)} testId="stat-outstanding" />
        <Stat label={t('overview.withBalance')} value={count(data.liability.participants_with_balance)} testId="stat-with-balance" />
      </SimpleGrid>
      <MoneyCard data={data} />
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <ChartCard title={t('money.liabilityChart')} rows={data.liability.history} rowKey="date" keyLabel={t('overview.date')} series={liabilitySeries} format={(value) => (inMoney ? money(value) : count(value))}>
          {(drawn) => (
            <LineChart
              h={220}
              data={data.liability.history}
              dataKey="date"
              series={drawn}
              curveType="stepAfter"
              withDots={false}
              valueFormatter={inMoney ? (value) => money(value) : (value) => count(value)}
              yAxisProps={inMoney ? { width: 80 } : COUNT_AXIS}
              lineChartProps={NOT_FOCUSABLE}
            />
          )}
        </ChartCard>
        <ChartCard
          title={t('money.forecastChart')}
          rows={forecast.months}
          rowKey="month"
          keyLabel={t('money.month')}
          series={[inMoney ? forecastValue : forecastPoints]}
          tableSeries={inMoney ? [forecastPoints, forecastValue] : [forecastPoints]}
          format={(value, column) => (column === 'value' ? money(value) : count(value))}
          note={
            <Stack gap={0} mt={4}>
              <Text size="xs" c="dimmed">
                {t('money.forecastExplain')}
              </Text>
              <Text size="xs" c="dimmed" data-testid="forecast-later">
                {inMoney ? t('money.laterValue', { points: count(forecast.later_points), value: money(forecast.later_value) }) : t('money.later', { points: count(forecast.later_points) })}
              </Text>
              <Text size="xs" c="dimmed">
                {t('money.never', { points: count(forecast.never_points) })}
              </Text>
            </Stack>
          }
        >
          {(drawn) => (
            // Months down the side: twelve labels read whole there, where across they would be thinned out.
            <BarChart
              h={300}
              data={forecast.months}
              dataKey="month"
              orientation="vertical"
              series={drawn}
              valueFormatter={inMoney ? (value) => money(value) : (value) => count(value)}
              xAxisProps={inMoney ? {} : COUNT_AXIS}
              yAxisProps={{ width: 64, interval: 0 }}
              barChartProps={NOT_FOCUSABLE}
            />
          )}
        </ChartCard>
        <ChartCard title={t('overview.pointsChart')} rows={data.days} rowKey="date" keyLabel={t('overview.date')} series={points} format={count}>
          {(drawn) => <AreaChart h={220} data={data.days} dataKey="date" series={drawn} curveType="linear" withDots={false} withLegend yAxisProps={COUNT_AXIS} valueFormatter={count} areaChartProps={NOT_FOCUSABLE} />}
        </ChartCard>
        <ChartCard title={t('overview.activeChart')} rows={data.days} rowKey="date" keyLabel={t('overview.date')} series={active} format={count}>
          {(drawn) => <LineChart h={220} data={data.days} dataKey="date" series={drawn} curveType="linear" withDots={false} yAxisProps={COUNT_AXIS} valueFormatter={count} lineChartProps={NOT_FOCUSABLE} />}
        </ChartCard>
        <ChartCard title={t('overview.eventsChart')} rows={data.days} rowKey="date" keyLabel={t('overview.date')} series={events} format={count}>
          {(drawn) => <BarChart h={220} data={data.days} dataKey="date" series={drawn} withLegend yAxisProps={COUNT_AXIS} valueFormatter={count} barChartProps={NOT_FOCUSABLE} />}
        </ChartCard>
        <ChartCard title={t('overview.webhooksChart')} rows={data.days} rowKey="date" keyLabel={t('overview.date')} series={webhooks} format={count}>
          {(drawn) => <BarChart h={220} data={data.days} dataKey="date" series={drawn} type="stacked" withLegend yAxisProps={COUNT_AXIS} valueFormatter={count} barChartProps={NOT_FOCUSABLE} />}
        </ChartCard>
      </SimpleGrid>
      <TopRules data={data} count={count} />
      <Text size="xs" c="dimmed">
        {t('overview.liabilityAsOf', { at: f.dateTime(data.liability.as_of) })}
      </Text>
    </>
  );
}

function TopRules({ data, count }: { data: OverviewData; count: (value: number | null) => string }) {
  const { t } = useTranslation();
  return (
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
                  <Table.Td>{rule.name ?? rule.rule_id}</Table.Td>
                  <Table.Td>{count(rule.points)}</Table.Td>
                  <Table.Td>{count(rule.events)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
    </Card>
  );
}
