import { h, svg, wait, prefersReducedMotion } from './dom.js';
import { activityFrame, type ActivityContext } from './activity.js';
import { i18n } from './i18n.js';
import type { PublicActivity, PublicSegment } from './types.js';

/**
 * The spin wheel. The server draws the segment (`validate`) and completes
 * the attempt; the wheel only animates to the segment the server chose, so
 * what the visitor sees is always what the server awarded.
 */
const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#ec4899', '#14b8a6', '#f97316'];
const SPIN_DURATION_MS = 2_400;
const FULL_TURNS = 4;
const RADIUS = 96;

function point(angleDegrees: number, radius: number): [number, number] {
  const radians = ((angleDegrees - 90) * Math.PI) / 180;
  return [Math.round(radius * Math.cos(radians) * 100) / 100, Math.round(radius * Math.sin(radians) * 100) / 100];
}

function segmentPath(index: number, count: number): string {
  const size = 360 / count;
  const [x1, y1] = point(index * size, RADIUS);
  const [x2, y2] = point((index + 1) * size, RADIUS);
  return `M0 0 L${x1} ${y1} A${RADIUS} ${RADIUS} 0 ${size > 180 ? 1 : 0} 1 ${x2} ${y2} Z`;
}

function drawWheel(segments: PublicSegment[]): { root: SVGSVGElement; rotor: SVGGElement } {
  const rotor = svg('g', { class: 'lr-wheel-rotor' });
  const size = 360 / segments.length;
  segments.forEach((segment, index) => {
    const color = segment.color && /^#[0-9a-fA-F]{3,8}$|^[a-z]{3,20}$/.test(segment.color) ? segment.color : PALETTE[index % PALETTE.length];
    rotor.append(svg('path', { d: segmentPath(index, segments.length), fill: color, stroke: '#fff', 'stroke-width': 1.5 }));
    const middle = index * size + size / 2;
    const [x, y] = point(middle, RADIUS * 0.62);
    const label = segment.label.length > 16 ? `${segment.label.slice(0, 15)}…` : segment.label;
    rotor.append(svg('text', { x, y, transform: `rotate(${middle} ${x} ${y})`, 'text-anchor': 'middle', 'dominant-baseline': 'middle', class: 'lr-wheel-label' }, label));
  });
  rotor.append(svg('circle', { r: 10, class: 'lr-wheel-hub', 'stroke-width': 2 }));
  const pointer = svg('path', { d: 'M-9 -100 L9 -100 L0 -82 Z', class: 'lr-wheel-pointer' });
  const labels = segments.map((s) => s.label).join(', ');
  const root = svg('svg', { viewBox: '-100 -102 200 204', role: 'img', 'aria-label': i18n().t.wheelLabel(segments.length, labels), class: 'lr-wheel' }, rotor, pointer);
  return { root, rotor };
}

/** The rotation (degrees, clockwise) that leaves `index`'s centre under the pointer, at least FULL_TURNS past `from`. */
export function landingRotation(from: number, index: number, count: number): number {
  const centre = (index + 0.5) * (360 / count);
  const target = (360 - centre) % 360;
  const base = from + FULL_TURNS * 360;
  return base + ((target - (base % 360) + 360) % 360);
}

export function renderWheel(ctx: ActivityContext, activity: PublicActivity): HTMLElement {
  const segments = activity.segments ?? [];
  const { root, rotor } = drawWheel(segments);
  const { t } = i18n();
  const button = h('button', { type: 'button', class: 'lr-button lr-primary', 'data-action': 'spin' }, t.spinButton);
  const { attempts, result, error, play } = activityFrame(ctx, activity, button, 'spin');
  let rotation = 0;

  button.addEventListener('click', () =>
    play(t.spinning, async () => {
      const { draw, completion } = await ctx.sdk.spin(activity.id);
      const index = completion.result.segment_index ?? draw.result.segment_index ?? 0;
      rotation = landingRotation(rotation, index, segments.length);
      // Under reduced motion the wheel jumps to the drawn segment and the result is announced at once.
      const duration = prefersReducedMotion() ? 0 : SPIN_DURATION_MS;
      rotor.style.transition = duration ? `transform ${duration}ms cubic-bezier(0.16, 0.84, 0.3, 1)` : 'none';
      rotor.style.transform = `rotate(${rotation}deg)`;
      await wait(duration);
      const label = completion.result.prize_label ?? segments[index]?.label ?? '';
      const won = completion.result.prize_type === 'none' ? t.noPrize(label) : t.won(label);
      return { completion, headline: h('strong', { 'data-role': 'prize', 'data-segment-index': index }, won) };
    }),
  );

  const title = activity.name ?? t.spinTitle;
  return h(
    'section',
    { class: 'lr-activity lr-spin-wheel', 'data-activity-id': activity.id, 'aria-label': title },
    h('h3', {}, title),
    h('div', { class: 'lr-wheel-box' }, root as unknown as Node),
    button,
    attempts,
    result,
    error,
  );
}
