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
  /** Where the window starts and ends, in days from the period's first midnight (fractions are hours), clipped to the period. */
  start: number;
  end: number;
  before: boolean;
  after: boolean;
}

/**
 * Where an instant window lies in the period, in days from its first local
 * midnight (the tenant's zone), clipped to the period; null when it falls
 * outside. A null bound is open and runs off the period's edge.
 */
function spanOf(period: { from: string; to: string }, zoned: (iso: string) => string, startsAt: string | null, endsAt: string | null): Span | null {
  const length = daysBetween(period.from, period.to) + 1;
  const offset = (iso: string) => {
    const local = zoned(iso); // YYYY-MM-DDTHH:MM in the tenant's zone
    return daysBetween(period.from, local.slice(0, 10)) + (Number(local.slice(11, 13)) * 60 + Number(local.slice(14, 16))) / 1440;
  };
  const from = startsAt ? offset(startsAt) : -Infinity;
  const to = endsAt ? offset(endsAt) : Infinity;
  const start = Math.max(0, from);
  const end = Math.min(length, to);
  if (end <= start) return null;
  return { start, end, before: from < 0, after: to > length };
}

/** The span as a box's place in the days' lane, in percent. */
function placed(span: Span, length: number): CSSProperties {
  return { position: 'absolute', left: `${(span.start / length) * 100}%`, width: `${((span.end - span.start) / length) * 100}%`, top: '50%', transform: 'translateY(-50%)' };
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
            const span = spanOf(period, f.toZonedInput, item.starts_at, item.ends_at);
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
                <Box aria-hidden="true" style={{ gridColumn: '2 / -1', gridRow: 1, position: 'relative', height: 28 }}>
                  {span && (
                    <Box
                      style={{
                        ...placed(span, days.length),
                        height: 18,
                        borderRadius: `${span.before ? 0 : 9}px ${span.after ? 0 : 9}px ${span.after ? 0 : 9}px ${span.before ? 0 : 9}px`,
                        background: item.state === 'draft' ? 'var(--mantine-color-white)' : item.state === 'ended' || item.state === 'paused' ? 'var(--mantine-color-gray-5)' : `var(--mantine-color-${color}-7)`,
                        border: item.state === 'draft' ? `2px dashed var(--mantine-color-${color}-7)` : undefined,
                      }}
                    />
                  )}
                  {overlaps.map((o) => {
                    const stretch = spanOf(period, f.toZonedInput, o.starts_at, o.ends_at);
                    if (!stretch) return null;
                    return (
                      <Box
                        key={`${o.kind}:${o.id}`}
                        style={{
                          ...placed(stretch, days.length),
                          height: 26,
                          border: '2px solid var(--mantine-color-red-7)',
                          borderRadius: 4,
                          background: 'repeating-linear-gradient(45deg, transparent 0 4px, rgba(201, 42, 42, 0.25) 4px 8px)',
                        }}
                      />
                    );
                  })}
                </Box>
              </Box>
            );
          })}
        </Box>
      </Box>
    </Box>
  );
}
