import { Button, Card, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ResponseBody } from '@loyalty/sdk';
import { ErrorAlert } from '../../../../components/error-alert';
import { useFormat } from '../../../../lib/format';

/** The periods a backtest may cover, in days (the API accepts up to 366). */
export const BACKTEST_PERIODS_DAYS = [7, 30, 90] as const;
export type BacktestDays = (typeof BACKTEST_PERIODS_DAYS)[number];

type SimulationResult = ResponseBody<'simulateRule'>;

interface BacktestCardProps {
  days: BacktestDays;
  onDaysChange: (days: BacktestDays) => void;
  onRun: () => void;
  running: boolean;
  runnable: boolean;
  eventRule: boolean;
  hasBudget: boolean;
  result: SimulationResult | undefined;
  error: unknown;
  /** False when the rule changed since the result was computed. */
  current: boolean;
}

/** What the rule as written would have done over the stored events of a period: shown before it is activated. */
export function BacktestCard({ days, onDaysChange, onRun, running, runnable, eventRule, hasBudget, result, error, current }: BacktestCardProps) {
  const { t } = useTranslation();
  const f = useFormat();
  const when = f.dateTime;
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rules.backtest')}
      </Title>
      <Text size="sm" mb="sm">
        {eventRule ? t('rules.backtestExplainPeriod') : t('rules.backtestEventOnly')}
      </Text>
      <Stack gap="sm">
        <div>
          <Text component="label" id="backtest-period-label" size="sm" fw={500}>
            {t('rules.backtestPeriod')}
          </Text>
          <SegmentedControl
            aria-labelledby="backtest-period-label"
            fullWidth
            data={BACKTEST_PERIODS_DAYS.map((d) => ({ value: String(d), label: t('rules.backtestDays', { days: d }) }))}
            value={String(days)}
            onChange={(value) => onDaysChange(Number(value) as BacktestDays)}
          />
        </div>
        <Button variant="default" onClick={onRun} loading={running} disabled={!runnable || !eventRule}>
          {t('rules.runBacktest')}
        </Button>
      </Stack>
      <ErrorAlert error={error} />
      {result && (
        <Stack gap={4} mt="sm" data-testid="backtest-result" aria-live="polite">
          {!current && <Text c="red.9">{t('rules.backtestStale')}</Text>}
          <Text size="sm" c="dimmed">
            {when(result.from)} – {when(result.to)}
          </Text>
          <Text data-testid="backtest-matched">{t('rules.eventsMatched', { matched: result.events_matched, scanned: result.events_scanned })}</Text>
          <Text data-testid="backtest-participants">{t('rules.participantsReached', { count: result.participants })}</Text>
          <Text fw={700} data-testid="backtest-points">
            {t('rules.pointsWouldAward', { points: f.number(result.points) })}
          </Text>
          <Text data-testid="backtest-capped">{t('rules.cappedEvents', { count: result.capped_events })}</Text>
          {result.badges_awarded > 0 && <Text>{t('rules.badgesWouldAward', { count: result.badges_awarded })}</Text>}
          {hasBudget && (
            <Text data-testid="backtest-budget" c={result.budget_exhausted_at ? 'red.9' : undefined}>
              {result.budget_exhausted_at ? t('rules.budgetExhausted', { at: when(result.budget_exhausted_at) }) : t('rules.budgetLasts')}
            </Text>
          )}
          {result.truncated && <Text size="sm">{t('rules.truncated')}</Text>}
        </Stack>
      )}
    </Card>
  );
}
