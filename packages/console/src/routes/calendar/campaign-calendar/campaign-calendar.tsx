import { useMemo, useState } from 'react';
import { Alert, Button, Card, Chip, Group, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCalendar, type CalendarItem } from '../../../hooks/api/calendar';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';
import { periodOf, shift, type View } from '../common/period';
import { Timeline } from './components/timeline';

const KINDS = ['rule', 'multiplier', 'engagement', 'challenge', 'contest'] as const satisfies ReadonlyArray<CalendarItem['kind']>;
const STATES = ['draft', 'scheduled', 'live', 'paused', 'ended'] as const satisfies ReadonlyArray<CalendarItem['state']>;

/** Pairs of shown items that overlap on one event within the period, each pair once. */
function overlapPairs(items: CalendarItem[]): number {
  const shown = new Set(items.map((item) => `${item.kind}:${item.id}`));
  let pairs = 0;
  for (const item of items) for (const o of item.overlaps) if (shown.has(`${o.kind}:${o.id}`) && `${item.kind}:${item.id}` < `${o.kind}:${o.id}`) pairs += 1;
  return pairs;
}

/**
 * The campaign calendar: every rule, multiplier, engagement, challenge and
 * contest of a month or a week of the tenant's days, stacked on one timeline,
 * filtered by kind and status, with the overlaps of items that change the
 * points of one event marked (GET /admin/calendar).
 */
export function CampaignCalendar() {
  const { t, i18n } = useTranslation();
  const f = useFormat();
  const today = f.date(new Date().toISOString());
  const [view, setView] = useState<View>('month');
  const [anchor, setAnchor] = useState(today);
  const [kinds, setKinds] = useState<string[]>([...KINDS]);
  const [states, setStates] = useState<string[]>([...STATES]);
  const period = useMemo(() => periodOf(view, anchor), [view, anchor]);
  const calendar = useCalendar(period);
  const items = (calendar.data?.items ?? []).filter((item) => kinds.includes(item.kind) && states.includes(item.state));
  const title =
    view === 'month'
      ? new Intl.DateTimeFormat(i18n.language, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(new Date(`${period.from}T00:00:00Z`))
      : t('calendar.period', { from: period.from, to: period.to });
  const pairs = overlapPairs(items);
  return (
    <Stack>
      <PageHeader title={t('calendar.title')}>
        <SegmentedControl
          aria-label={t('calendar.view')}
          value={view}
          onChange={(value) => setView(value as View)}
          data={[
            { value: 'month', label: t('calendar.month') },
            { value: 'week', label: t('calendar.week') },
          ]}
        />
      </PageHeader>
      <Text size="sm" c="dimmed" maw={900}>
        {t('calendar.explain')}
      </Text>
      <Card withBorder padding="md">
        <Stack gap="sm">
          <Group justify="space-between" wrap="wrap">
            <Title order={2} size="h3" data-testid="calendar-period">
              {title}
            </Title>
            <Group gap="xs">
              <Button variant="default" size="xs" onClick={() => setAnchor(shift(view, anchor, -1))}>
                {t(view === 'month' ? 'calendar.previousMonth' : 'calendar.previousWeek')}
              </Button>
              <Button variant="default" size="xs" onClick={() => setAnchor(today)}>
                {t('calendar.today')}
              </Button>
              <Button variant="default" size="xs" onClick={() => setAnchor(shift(view, anchor, 1))}>
                {t(view === 'month' ? 'calendar.nextMonth' : 'calendar.nextWeek')}
              </Button>
            </Group>
          </Group>
          <ZoneNote />
          <Group gap="xl" wrap="wrap" align="flex-start">
            <Stack gap={4} role="group" aria-labelledby="calendar-kinds">
              <Text size="sm" fw={600} id="calendar-kinds">
                {t('calendar.kinds')}
              </Text>
              <Chip.Group multiple value={kinds} onChange={setKinds}>
                <Group gap={6}>
                  {KINDS.map((kind) => (
                    <Chip key={kind} value={kind} size="xs">
                      {t(`calendar.kindPlural.${kind}`)}
                    </Chip>
                  ))}
                </Group>
              </Chip.Group>
            </Stack>
            <Stack gap={4} role="group" aria-labelledby="calendar-states">
              <Text size="sm" fw={600} id="calendar-states">
                {t('calendar.states')}
              </Text>
              <Chip.Group multiple value={states} onChange={setStates}>
                <Group gap={6}>
                  {STATES.map((state) => (
                    <Chip key={state} value={state} size="xs">
                      {t(`calendar.state.${state}`)}
                    </Chip>
                  ))}
                </Group>
              </Chip.Group>
            </Stack>
          </Group>
          <ErrorAlert error={calendar.error} />
          {calendar.isPending && <Loading />}
          {calendar.data?.truncated && (
            <Alert color="yellow" role="status">
              {t('calendar.truncated', { count: calendar.data.items.length })}
            </Alert>
          )}
          {pairs > 0 && (
            <Text size="sm" c="red.9" fw={600} data-testid="overlap-count">
              ⚠ {t('calendar.overlapCount', { count: pairs })}
            </Text>
          )}
          {calendar.data && items.length === 0 && <Text c="dimmed">{t('calendar.none')}</Text>}
          {calendar.data && items.length > 0 && <Timeline period={period} items={items} all={calendar.data.items} today={today} />}
        </Stack>
      </Card>
    </Stack>
  );
}
