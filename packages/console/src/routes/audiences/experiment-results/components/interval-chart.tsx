import type { Interval } from '../../../../hooks/api/experiments';

export interface Scale {
  min: number;
  max: number;
}

/** One scale for every variant's interval, always holding 0 (no difference), with a little room either side. */
export function scaleOf(intervals: Interval[]): Scale {
  const lows = intervals.map((i) => i.low);
  const highs = intervals.map((i) => i.high);
  const min = Math.min(0, ...lows);
  const max = Math.max(0, ...highs);
  const pad = (max - min || 1) * 0.1;
  return { min: min - pad, max: max + pad };
}

const WIDTH = 240;
const HEIGHT = 28;

/**
 * A variant's difference to control drawn as a horizontal 95% interval on a
 * scale shared by all variants, around the line of no difference. Its text
 * equivalent (the same numbers in words) is the image's accessible name.
 */
export function IntervalChart({ interval, scale, label }: { interval: Interval; scale: Scale; label: string }) {
  const x = (value: number) => ((value - scale.min) / (scale.max - scale.min)) * WIDTH;
  const above = interval.low > 0;
  const below = interval.high < 0;
  const color = above ? '#0b7a55' : below ? '#b3261e' : '#5c5f66';
  const zero = x(0);
  return (
    <svg role="img" aria-label={label} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} data-testid="interval-chart" style={{ maxWidth: '100%', display: 'block' }}>
      <title>{label}</title>
      <line x1={zero} x2={zero} y1={2} y2={HEIGHT - 2} stroke="#495057" strokeDasharray="3 2" strokeWidth={1} />
      <line x1={x(interval.low)} x2={x(interval.high)} y1={HEIGHT / 2} y2={HEIGHT / 2} stroke={color} strokeWidth={3} strokeLinecap="round" />
      <line x1={x(interval.low)} x2={x(interval.low)} y1={HEIGHT / 2 - 6} y2={HEIGHT / 2 + 6} stroke={color} strokeWidth={2} />
      <line x1={x(interval.high)} x2={x(interval.high)} y1={HEIGHT / 2 - 6} y2={HEIGHT / 2 + 6} stroke={color} strokeWidth={2} />
      <circle cx={x(interval.estimate)} cy={HEIGHT / 2} r={4.5} fill={color} />
    </svg>
  );
}
