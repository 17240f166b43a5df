/**
 * The statistics of an experiment's results: pure functions, no I/O.
 *
 * Each participant exposed to a variant contributes one number, their goal
 * total over the exposure window (a count of events, a sum of a property, a
 * count of redemptions). A variant is compared to the control (the first
 * variant) by the difference of the means per participant, with Welch's t
 * interval (unequal variances, Welch–Satterthwaite degrees of freedom), and by
 * the relative difference (variant ÷ control − 1), whose interval is Fieller's
 * (exact for normally distributed means; unlike the delta method it stays
 * honest when the control's mean is itself uncertain, see the coverage test). The method, its assumptions and its limits are written
 * down in docs/decisions/experiments.md.
 */

/** Below this many exposed participants in either arm, no interval is given: the t interval's coverage is not to be trusted on skewed goal values. */
export const MIN_PARTICIPANTS_PER_ARM = 30;
export const CONFIDENCE = 0.95;

/** What SQL aggregates per arm: participants, and the sum and the sum of squares of their goal totals. */
export interface ArmTotals {
  n: number;
  sum: number;
  sum_squares: number;
}

export interface ArmSummary {
  n: number;
  mean: number;
  /** The sample variance (divisor n − 1); 0 for fewer than two participants. */
  variance: number;
}

export function totalsOf(values: readonly number[]): ArmTotals {
  let sum = 0;
  let sumSquares = 0;
  for (const value of values) {
    sum += value;
    sumSquares += value * value;
  }
  return { n: values.length, sum, sum_squares: sumSquares };
}

export function summarize(totals: ArmTotals): ArmSummary {
  const { n, sum, sum_squares: sumSquares } = totals;
  if (n === 0) return { n: 0, mean: 0, variance: 0 };
  const mean = sum / n;
  // Rounding can leave a tiny negative number where the variance is 0.
  const variance = n > 1 ? Math.max(0, (sumSquares - mean * sum) / (n - 1)) : 0;
  return { n, mean, variance };
}

export type ResultWarning =
  | 'too_few_participants'
  | 'no_variation'
  | 'control_mean_zero'
  | 'relative_unreliable';

export interface Comparison {
  /** Variant mean − control mean, in goal units per participant. */
  absolute: number;
  absolute_ci95: [number, number];
  /** Variant mean ÷ control mean − 1 (0.12 is +12%); null when the control's mean is 0 or not distinguishable from 0. */
  relative: number | null;
  relative_ci95: [number, number] | null;
  /** Welch–Satterthwaite degrees of freedom of the difference. */
  degrees_of_freedom: number;
  standard_error: number;
}

export interface ComparisonResult {
  comparison: Comparison | null;
  warnings: ResultWarning[];
}

/**
 * The variant against the control. No interval at all (comparison null) when
 * either arm has fewer than MIN_PARTICIPANTS_PER_ARM participants or when no
 * participant in either arm differs from another (a zero standard error would
 * give an interval of width 0, which claims a certainty the data lacks).
 */
export function compareToControl(variant: ArmSummary, control: ArmSummary): ComparisonResult {
  const warnings: ResultWarning[] = [];
  if (variant.n < MIN_PARTICIPANTS_PER_ARM || control.n < MIN_PARTICIPANTS_PER_ARM) {
    return { comparison: null, warnings: ['too_few_participants'] };
  }
  const varianceOfVariantMean = variant.variance / variant.n;
  const varianceOfControlMean = control.variance / control.n;
  const varianceOfDifference = varianceOfVariantMean + varianceOfControlMean;
  if (!(varianceOfDifference > 0)) return { comparison: null, warnings: ['no_variation'] };

  const standardError = Math.sqrt(varianceOfDifference);
  const degreesOfFreedom = welchDegreesOfFreedom(variant, control);
  const quantile = studentTQuantile(1 - (1 - CONFIDENCE) / 2, degreesOfFreedom);
  const absolute = variant.mean - control.mean;
  const comparison: Comparison = {
    absolute,
    absolute_ci95: [absolute - quantile * standardError, absolute + quantile * standardError],
    relative: null,
    relative_ci95: null,
    degrees_of_freedom: degreesOfFreedom,
    standard_error: standardError,
  };

  if (control.mean === 0) {
    warnings.push('control_mean_zero');
    return { comparison, warnings };
  }
  // A percentage of a negative mean (a goal property that can be negative) reads backwards; none is given.
  const relativeInterval = control.mean < 0 ? null : fiellerInterval(variant.mean, varianceOfVariantMean, control.mean, varianceOfControlMean, quantile);
  if (relativeInterval === null) {
    warnings.push('relative_unreliable');
    return { comparison, warnings };
  }
  comparison.relative = variant.mean / control.mean - 1;
  comparison.relative_ci95 = [relativeInterval[0] - 1, relativeInterval[1] - 1];
  return { comparison, warnings };
}

/**
 * Fieller's interval for ρ = μ_v / μ_c from independent means m_v, m_c with
 * variances v_v, v_c: the ρ with (m_v − ρ·m_c)² ≤ q²·(v_v + ρ²·v_c), i.e.
 * ρ = (m_c·m_v ± q·√(m_c²·v_v + m_v²·v_c − q²·v_c·v_v)) / (m_c² − q²·v_c).
 * Null when m_c² ≤ q²·v_c: the control's mean is not distinguishable from 0,
 * and the set of ratios is then unbounded.
 */
export function fiellerInterval(variantMean: number, varianceOfVariantMean: number, controlMean: number, varianceOfControlMean: number, quantile: number): [number, number] | null {
  const q2 = quantile * quantile;
  const denominator = controlMean * controlMean - q2 * varianceOfControlMean;
  if (!(denominator > 0)) return null;
  // Non-negative whenever the denominator is positive; max() only absorbs rounding.
  const discriminant = Math.max(
    0,
    controlMean * controlMean * varianceOfVariantMean + variantMean * variantMean * varianceOfControlMean - q2 * varianceOfControlMean * varianceOfVariantMean,
  );
  const half = quantile * Math.sqrt(discriminant);
  return [(controlMean * variantMean - half) / denominator, (controlMean * variantMean + half) / denominator];
}

/**
 * Welch–Satterthwaite: ν = (s₁²/n₁ + s₂²/n₂)² / ((s₁²/n₁)²/(n₁−1) + (s₂²/n₂)²/(n₂−1)).
 * An arm with zero variance contributes nothing to either sum.
 */
export function welchDegreesOfFreedom(a: ArmSummary, b: ArmSummary): number {
  const va = a.variance / a.n;
  const vb = b.variance / b.n;
  const denominator = (va * va) / (a.n - 1) + (vb * vb) / (b.n - 1);
  return ((va + vb) * (va + vb)) / denominator;
}

/** The difference's interval excludes 0. */
export function isMeasurable(comparison: Comparison | null): comparison is Comparison {
  return comparison !== null && (comparison.absolute_ci95[0] > 0 || comparison.absolute_ci95[1] < 0);
}

/**
 * Points it costs to gain one more goal unit than the control: extra points
 * per participant ÷ extra goal per participant. Null unless the variant
 * measurably raised the goal (an interval including 0 means no measurable
 * effect, and a measurable loss has no "cost per extra unit"). Negative when the
 * variant gains goal units while spending fewer points than the control.
 */
export function costPerExtraGoal(comparison: Comparison | null, extraPointsPerParticipant: number): number | null {
  if (!isMeasurable(comparison) || comparison.absolute <= 0) return null;
  return extraPointsPerParticipant / comparison.absolute;
}

// ---------------------------------------------------------------------------
// The plain sentence.

/** How the goal is named in a sentence: "purchases per participant", "per extra purchase". */
export interface GoalLabel {
  singular: string;
  plural: string;
}

export interface SentenceInput {
  /** The variant's display name ("variant B", or the key when unnamed). */
  name: string;
  exposed: number;
  controlExposed: number;
  result: ComparisonResult;
  label: GoalLabel;
  extraPointsPerParticipant: number;
  costPerExtraGoal: number | null;
}

/**
 * "variant B: +12% purchases per participant, 95% CI +4% to +20%, costs 310
 * points per extra purchase"; without a measurable effect, without a usable
 * relative interval, or without enough data, the sentence says that instead.
 */
export function variantSentence(input: SentenceInput): string {
  const { name, label, result } = input;
  const { comparison } = result;
  if (!comparison) {
    if (result.warnings.includes('too_few_participants')) {
      return `${name}: too few participants to compare yet (${grouped(input.exposed)} here, ${grouped(input.controlExposed)} in control; at least ${MIN_PARTICIPANTS_PER_ARM} each)`;
    }
    return `${name}: no difference can be estimated yet, every participant in both groups has the same ${label.plural} per participant`;
  }
  const estimate =
    comparison.relative !== null && comparison.relative_ci95 !== null
      ? percentEstimate(comparison.relative, comparison.relative_ci95, label)
      : absoluteEstimate(comparison.absolute, comparison.absolute_ci95, label, result.warnings);
  return `${name}: ${estimate}, ${costClause(input, comparison)}`;
}

function percentEstimate(relative: number, ci: [number, number], label: GoalLabel): string {
  const decimals = decimalsFor((ci[1] - ci[0]) * 100);
  const percent = (x: number) => `${signed(x * 100, decimals)}%`;
  return `${percent(relative)} ${label.plural} per participant, 95% CI ${percent(ci[0])} to ${percent(ci[1])}`;
}

function absoluteEstimate(absolute: number, ci: [number, number], label: GoalLabel, warnings: readonly ResultWarning[]): string {
  const decimals = decimalsFor(ci[1] - ci[0]);
  const why = warnings.includes('control_mean_zero') ? 'control had none' : "control's mean too uncertain for a percentage";
  return `${signed(absolute, decimals)} ${label.plural} per participant, 95% CI ${signed(ci[0], decimals)} to ${signed(ci[1], decimals)} (${why})`;
}

function costClause(input: SentenceInput, comparison: Comparison): string {
  const extra = input.extraPointsPerParticipant;
  const perParticipant =
    Math.abs(extra) < 0.5 ? 'the same points per participant as control' : `${grouped(Math.abs(extra), 1)} ${extra > 0 ? 'more' : 'fewer'} points per participant than control`;
  if (!isMeasurable(comparison)) return `no measurable effect, ${perParticipant}`;
  if (comparison.absolute < 0) return `fewer ${input.label.plural} than control, ${perParticipant}`;
  const cost = input.costPerExtraGoal ?? 0;
  if (cost > 0) return `costs ${grouped(cost)} points per extra ${input.label.singular}`;
  if (cost === 0 || Math.abs(extra) < 0.5) return `at no extra points cost`;
  return `and saves ${grouped(-extra, 1)} points per participant`;
}

/** Enough decimals that an interval of this width is not written as one number twice. */
function decimalsFor(width: number): number {
  if (width >= 4) return 0;
  if (width >= 0.4) return 1;
  if (width >= 0.04) return 2;
  return 3;
}

function signed(x: number, decimals: number): string {
  const rounded = Number(x.toFixed(decimals));
  if (rounded === 0) return (0).toFixed(decimals);
  return `${rounded > 0 ? '+' : '-'}${Math.abs(rounded).toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })}`;
}

function grouped(x: number, maximumFractionDigits = 0): string {
  return x.toLocaleString('en-US', { maximumFractionDigits });
}

// ---------------------------------------------------------------------------
// Distributions. The t quantile is found by inverting the t distribution's
// CDF (the regularized incomplete beta function, continued fraction by
// Lentz's method) with safeguarded Newton steps: accurate to about 1e-10 for
// any df, fractional ones included (Welch's df is rarely an integer). Above
// T_EXACT_DF_MAX degrees of freedom the Cornish–Fisher expansion around the
// normal quantile is used instead (its error there is below 1e-12).

const T_EXACT_DF_MAX = 1e5;
const ITERATIONS_MAX = 10_000;
const EPSILON = 1e-15;
const TINY = 1e-300;

/** ln Γ(x) for x > 0: Lanczos approximation (g = 7, 9 coefficients), relative error about 1e-15. */
export function logGamma(x: number): number {
  const coefficients = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const z = x - 1;
  let series = coefficients[0];
  for (let i = 1; i < coefficients.length; i++) series += coefficients[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(series);
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= ITERATIONS_MAX; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPSILON) return h;
  }
  throw new Error(`incomplete beta did not converge (a=${a}, b=${b}, x=${x})`);
}

/** I_x(a, b), the regularized incomplete beta function. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The continued fraction converges fast on this side of the mean; the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) covers the other.
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, fractional allowed). */
export function studentTCdf(t: number, df: number): number {
  // The tail probability P(T > |t|) = ½ · I_{df/(df+t²)}(df/2, ½), computed directly so that small tails keep their precision.
  const tail = 0.5 * regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

function studentTDensity(t: number, df: number): number {
  return Math.exp(logGamma((df + 1) / 2) - logGamma(df / 2) - 0.5 * Math.log(df * Math.PI) - ((df + 1) / 2) * Math.log1p((t * t) / df));
}

/** The p-quantile of Student's t with `df` degrees of freedom: t such that P(T ≤ t) = p. */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  if (!(df > 0)) throw new RangeError(`df must be positive, got ${df}`);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  if (p === 0.5) return 0;
  if (df > T_EXACT_DF_MAX) return cornishFisherT(normalQuantile(p), df);
  // Bracket the root, then Newton steps that fall back to bisection when they would leave the bracket.
  let low = 0;
  let high = 2;
  while (studentTCdf(high, df) < p) {
    low = high;
    high *= 2;
  }
  let t = (low + high) / 2;
  for (let i = 0; i < 200; i++) {
    const excess = studentTCdf(t, df) - p;
    if (excess > 0) high = t;
    else low = t;
    let next = t - excess / studentTDensity(t, df);
    if (!(next > low && next < high)) next = (low + high) / 2;
    if (Math.abs(next - t) <= 1e-13 * Math.max(1, Math.abs(t))) return next;
    t = next;
  }
  return t;
}

/** Abramowitz & Stegun 26.7.5: the t quantile from the normal quantile z, to O(df⁻⁴). */
function cornishFisherT(z: number, df: number): number {
  const z2 = z * z;
  const g1 = (z * (z2 + 1)) / 4;
  const g2 = (z * ((5 * z2 + 16) * z2 + 3)) / 96;
  const g3 = (z * (((3 * z2 + 19) * z2 + 17) * z2 - 15)) / 384;
  return z + g1 / df + g2 / (df * df) + g3 / (df * df * df);
}

/** P(Z ≤ z) for the standard normal: ½·erfc(−z/√2), erfc(x) = Q(½, x²) through the incomplete gamma function. */
export function normalCdf(z: number): number {
  const tail = 0.5 * regularizedUpperGamma(0.5, (z * z) / 2);
  return z >= 0 ? 1 - tail : tail;
}

/** Q(a, x) = Γ(a, x)/Γ(a): the series below a + 1, the continued fraction (Lentz) above. */
function regularizedUpperGamma(a: number, x: number): number {
  if (x <= 0) return 1;
  const front = Math.exp(-x + a * Math.log(x) - logGamma(a));
  if (x < a + 1) {
    let term = 1 / a;
    let sum = term;
    for (let n = 1; n <= ITERATIONS_MAX; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPSILON) break;
    }
    return 1 - front * sum;
  }
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i <= ITERATIONS_MAX; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPSILON) break;
  }
  return front * h;
}

/**
 * The standard normal's p-quantile: Acklam's rational approximation (relative
 * error 1.2e-9) polished by two Halley steps on normalCdf.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`p must be in (0, 1), got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const pLow = 0.02425;
  let x: number;
  if (p < pLow) {
    const q = Math.sqrt(-2 * Math.log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - pLow) {
    const q = p - 0.5;
    const r = q * q;
    x = ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  for (let i = 0; i < 2; i++) {
    const error = normalCdf(x) - p;
    const u = error * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
    x -= u / (1 + (x * u) / 2);
  }
  return x;
}
