import type { Difference } from '../../../../hooks/api/experiments';

export interface Scale {
  min: number;
  max: number;
}

/** One scale for every interval on the page, always holding 0 (no difference), with a little room either side. */
export function scaleOf(differences: Difference[]): Scale {
  const min = Math.min(0, ...differences.map((d) => d.absolute_ci95[0]));
  const max = Math.max(0, ...differences.map((d) => d.absolute_ci95[1]));
  const pad = (max - min || 1) * 0.1;
  return { min: min - pad, max: max + pad };
}

const WIDTH = 240;
const HEIGHT = 40;

/**
 * A difference to control drawn as a horizontal 95% interval on a scale
 * shared by all rows, around the dashed line of no difference: green when
 * the whole interval is above 0, red when below, grey when it holds 0. Its
 * text equivalent (the same numbers in words) is the image's accessible name.
 */
export function IntervalChart({ difference, scale, label }: { difference: Difference; scale: Scale; label: string }) {
  const x = (value: number) => ((value - scale.min) / (scale.max - scale.min)) * WIDTH;
  const [low, high] = difference.absolute_ci95;
  const color = low > 0 ? '#0b7a55' : high < 0 ? '#b3261e' : '#5c5f66';
  const zero = x(0);
  const middle = 14;
  return (
    <svg role="img" aria-label={label} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} data-testid="interval-chart" style={{ display: 'block', width: '100%', minWidth: 200, maxWidth: 320, height: 'auto' }}>
      <line x1={0} x2={WIDTH} y1={middle} y2={middle} stroke="#dee2e6" strokeWidth={1} />
      <line x1={zero} x2={zero} y1={1} y2={middle + 12} stroke="#343a40" strokeDasharray="3 2" strokeWidth={1.5} />
      <text x={zero} y={HEIGHT - 2} textAnchor="middle" fontSize={11} fill="#343a40" aria-hidden="true">
        0
      </text>
      <line x1={x(low)} x2={x(high)} y1={middle} y2={middle} stroke={color} strokeWidth={3} strokeLinecap="round" />
      <line x1={x(low)} x2={x(low)} y1={middle - 6} y2={middle + 6} stroke={color} strokeWidth={2} />
      <line x1={x(high)} x2={x(high)} y1={middle - 6} y2={middle + 6} stroke={color} strokeWidth={2} />
      <circle cx={x(difference.absolute)} cy={middle} r={4.5} fill={color} />
    </svg>
  );
}
