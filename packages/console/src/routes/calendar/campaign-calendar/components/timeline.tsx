import type { CSSProperties } from 'react';
import { Anchor, Badge, Box, Group, Text } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { CalendarItem } from '../../../../hooks/api/calendar';
import { useFormat } from '../../../../lib/format';
import { daysBetween, daysOf } from '../../common/period';

const LABEL_WIDTH = 240;
/** The narrowest a day's column gets; wider when the screen has room, so a month fits a desktop screen. */
const DAY_WIDTH = 22;
const KIND_COLOR: Record<CalendarItem['kind'], string> = { rule: 'blue', multiplier: 'grape', engagement: 'teal', challenge: 'orange', contest: 'indigo' };

/** The item's own screen in the console. */
export function itemPath(item: Pick<CalendarItem, 'kind' | 'id'>): string {
  const id = encodeURIComponent(item.id);
  switch (item.kind) {
    case 'rule':
      return `/programs/rules/${id}`;
    case 'multiplier':
      return '/programs/multipliers';
    case 'engagement':
      return `/engagements/${id}`;
    case 'challenge':
      return `/competitions/challenges/${id}`;
    case 'contest':
      return `/competitions/contests/${id}`;
  }
}

/** The item's name in words: a multiplier has none of its own. */
export function useItemName(): (item: CalendarItem) => string {
  const { t } = useTranslation();
  return (item) => (item.kind === 'multiplier' ? t('calendar.multiplierName', { multiplier: item.multiplier, event: item.event_name }) : (item.name ?? item.id));
}

interface Span {
  start: number;
  end: number;
  before: boolean;
  after: boolean;
}

/**
 * The columns an instant window covers in the period's days (0-based, end
 * inclusive), clipped to the period, or null when it falls outside. The end
 * is exclusive: a window ending at midnight ends on the day before.
 */
function spanOf(period: { from: string; to: string }, dayOf: (iso: string) => string, startsAt: string | null, endsAt: string | null): Span | null {
  const last = daysBetween(period.from, period.to);
  const startDay = startsAt ? dayOf(startsAt) : null;
  const endDay = endsAt ? dayOf(new Date(Date.parse(endsAt) - 1).toISOString()) : null;
  const start = startDay === null ? 0 : Math.max(0, daysBetween(period.from, startDay));
  const end = endDay === null ? last : Math.min(last, daysBetween(period.from, endDay));
  if (start > last || end < 0 || end < start) return null;
  return { start, end, before: startDay === null || startDay < period.from, after: endDay === null || endDay > period.to };
}

const gridOf = (days: number): CSSProperties => ({ display: 'grid', gridTemplateColumns: `${LABEL_WIDTH}px repeat(${days}, minmax(${DAY_WIDTH}px, 1fr))`, alignItems: 'center' });

/** One row per item, stacked under a header of the period's days; bars and overlap marks are pictures of what the row's text says. */
export function Timeline({ period, items, all, today }: { period: { from: string; to: string }; items: CalendarItem[]; all: CalendarItem[]; today: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const name = useItemName();
  const days = daysOf(period);
  const byKey = new Map(all.map((item) => [`${item.kind}:${item.id}`, item]));
  // Overlaps with items the filters hide are not marked: the marks and the count speak of what is shown.
  const shown = new Set(items.map((item) => `${item.kind}:${item.id}`));
  const when = (iso: string | null, open: string) => (iso ? f.dateTime(iso) : open);
  return (
    <Box style={{ overflowX: 'auto' }} tabIndex={0} aria-label={t('calendar.items')} role="region">
      <Box style={{ minWidth: LABEL_WIDTH + days.length * DAY_WIDTH }}>
        <Box style={gridOf(days.length)} aria-hidden="true" py={4}>
          <span />
          {days.map((day) => (
            <Text
              key={day}
              size="xs"
              ta="center"
              fw={day === today ? 700 : 400}
              c={day === today ? 'blue.9' : 'dark.6'}
              style={{ borderLeft: '1px solid var(--mantine-color-gray-3)', background: day === today ? 'var(--mantine-color-blue-0)' : undefined }}
            >
              {day.slice(8)}
            </Text>
          ))}
        </Box>
        <Box component="ul" p={0} m={0} style={{ listStyle: 'none' }}>
          {items.map((item) => {
            const span = spanOf(period, f.date, item.starts_at, item.ends_at);
            const color = KIND_COLOR[item.kind];
            const overlaps = item.overlaps.filter((o) => shown.has(`${o.kind}:${o.id}`)).map((o) => ({ ...o, other: byKey.get(`${o.kind}:${o.id}`) }));
            return (
              <Box component="li" key={`${item.kind}:${item.id}`} style={{ ...gridOf(days.length), borderTop: '1px solid var(--mantine-color-gray-2)' }} py={6} data-testid="calendar-item">
                <Box pr="sm" style={{ gridColumn: '1 / 2', gridRow: 1, minWidth: 0 }}>
                  <Group gap={6} wrap="nowrap">
                    <Badge size="xs" color={color} variant="light" style={{ flexShrink: 0 }}>
                      {t(`calendar.kind.${item.kind}`)}
                    </Badge>
                    <Anchor component={Link} to={itemPath(item)} size="sm" fw={600} style={{ overflowWrap: "anywhere" }}>
                      {name(item)}
                    </Anchor>
                  </Group>
                  <Text size="xs" c="dimmed">
                    {t(`calendar.state.${item.state}`)}
                    {item.event_name && item.kind !== 'multiplier' ? ` · ${t('calendar.onEvent', { event: item.event_name })}` : ''}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {t('calendar.window', { from: when(item.starts_at, t('calendar.openStart')), to: when(item.ends_at, t('calendar.openEnd')) })}
                  </Text>
                  {overlaps.length > 0 && (
                    <Text size="xs" c="red.9" fw={600} data-testid="overlap-marker">
                      ⚠ {t('calendar.overlapsWith', {
                        items: overlaps.map((o) => t('calendar.overlapStretch', { name: o.other ? name(o.other) : o.id, from: when(o.starts_at, t('calendar.openStart')), to: when(o.ends_at, t('calendar.openEnd')) })).join('; '),
                      })}
                    </Text>
                  )}
                </Box>
                {span && (
                  <Box
                    aria-hidden="true"
                    style={{
                      gridColumn: `${span.start + 2} / ${span.end + 3}`,
                      gridRow: 1,
                      height: 18,
                      borderRadius: `${span.before ? 0 : 9}px ${span.after ? 0 : 9}px ${span.after ? 0 : 9}px ${span.before ? 0 : 9}px`,
                      background: item.state === 'draft' ? 'var(--mantine-color-white)' : item.state === 'ended' || item.state === 'paused' ? 'var(--mantine-color-gray-5)' : `var(--mantine-color-${color}-7)`,
                      border: item.state === 'draft' ? `2px dashed var(--mantine-color-${color}-7)` : undefined,
                    }}
                  />
                )}
                {overlaps.map((o) => {
                  const stretch = spanOf(period, f.date, o.starts_at, o.ends_at);
                  if (!stretch) return null;
                  return (
                    <Box
                      key={`${o.kind}:${o.id}`}
                      aria-hidden="true"
                      style={{
                        gridColumn: `${stretch.start + 2} / ${stretch.end + 3}`,
                        gridRow: 1,
                        height: 26,
                        border: '2px solid var(--mantine-color-red-7)',
                        borderRadius: 4,
                        background: 'repeating-linear-gradient(45deg, transparent 0 4px, rgba(201, 42, 42, 0.25) 4px 8px)',
                      }}
                    />
                  );
                })}
              </Box>
            );
          })}
        </Box>
      </Box>
    </Box>
  );
}
