import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compareToControl,
  costPerExtraGoal,
  fiellerInterval,
  MIN_PARTICIPANTS_PER_ARM,
  normalQuantile,
  studentTCdf,
  studentTQuantile,
  summarize,
  totalsOf,
  variantSentence,
  welchDegreesOfFreedom,
  type ArmSummary,
} from './statistics.js';

const near = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} ± ${tolerance}`);

const repeat = (value: number, times: number) => Array.from({ length: times }, () => value);
const arm = (values: number[]): ArmSummary => summarize(totalsOf(values));
const PURCHASES = { singular: 'purchase', plural: 'purchases' };

test('t quantiles match the published tables, at integer and fractional df, and meet the normal quantile for large df', () => {
  // Two-sided 95% and 99% critical values (Student's t table; e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2, to more places).
  const table: Array<[number, number, number]> = [
    [1, 12.706204736, 63.656741163],
    [2, 4.30265273, 9.9248432],
    [5, 2.570581836, 4.032142984],
    [10, 2.228138852, 3.169272673],
    [30, 2.042272456, 2.749995654],
    [100, 1.983971519, 2.625890521],
    [1000, 1.962339081, 2.580754698],
  ];
  for (const [df, q975, q995] of table) {
    near(studentTQuantile(0.975, df), q975, 1e-8, `t(0.975, ${df})`);
    near(studentTQuantile(0.995, df), q995, 1e-7, `t(0.995, ${df})`);
    near(studentTQuantile(0.025, df), -q975, 1e-8, `t(0.025, ${df})`);
    near(studentTCdf(q975, df), 0.975, 1e-9, `cdf at t(0.975, ${df})`);
  }
  // Half-integer and fractional df (Welch's are rarely integers): the inverse of the CDF at that df.
  for (const df of [2.5, 7.3, 62.476]) near(studentTCdf(studentTQuantile(0.975, df), df), 0.975, 1e-12, `round trip at df ${df}`);
  near(normalQuantile(0.975), 1.959963984540054, 1e-12, 'z(0.975)');
  near(normalQuantile(1e-10), -6.361340902404056, 1e-9, 'z(1e-10)');
  // Above 1e5 df the Cornish–Fisher expansion takes over: continuous across the switch, and down to z far out.
  near(studentTQuantile(0.975, 1e5 + 1), studentTQuantile(0.975, 1e5 - 1), 1e-9, 'continuity at the switch');
  near(studentTQuantile(0.975, 1e12), 1.959963984540054, 1e-10, 't(0.975, 1e12)');
});

test('Welch df and the interval on hand-computed examples', () => {
  // A = 1..5 (mean 3, variance 2.5), B = 2,4,…,10 (mean 6, variance 10): s²/n = 0.5 and 2,
  // ν = 2.5² / (0.5²/4 + 2²/4) = 6.25 / 1.0625 = 100/17.
  near(welchDegreesOfFreedom(arm([2, 4, 6, 8, 10]), arm([1, 2, 3, 4, 5])), 100 / 17, 1e-12, 'Welch df of the tiny example');

  // Control: 15 × 0 and 15 × 2 (mean 1, variance 30/29); variant: 20 × 1 and 20 × 3 (mean 2, variance 40/39).
  // s²/n = 1/29 and 1/39; se² = 68/1131; ν = (68/1131)² / (1/29³ + 1/39³) = 76908/1231 ≈ 62.476.
  const control = arm([...repeat(0, 15), ...repeat(2, 15)]);
  const variant = arm([...repeat(1, 20), ...repeat(3, 20)]);
  assert.deepEqual([control.n, control.mean, variant.n, variant.mean], [30, 1, 40, 2]);
  near(control.variance, 30 / 29, 1e-12, 'control variance');
  near(variant.variance, 40 / 39, 1e-12, 'variant variance');
  const { comparison, warnings } = compareToControl(variant, control);
  assert.deepEqual(warnings, []);
  assert.ok(comparison);
  near(comparison.degrees_of_freedom, 76908 / 1231, 1e-9, 'Welch df');
  near(comparison.standard_error, Math.sqrt(68 / 1131), 1e-12, 'standard error');
  // t(0.975, 62.476) = 1.998668583 (between the table's 2.000 at 60 and 1.997 at 65).
  const q = 1.9986685833;
  near(comparison.absolute, 1, 1e-12, 'difference');
  near(comparison.absolute_ci95[0], 1 - q * Math.sqrt(68 / 1131), 1e-9, 'lower bound');
  near(comparison.absolute_ci95[1], 1 + q * Math.sqrt(68 / 1131), 1e-9, 'upper bound');
  near(comparison.absolute_ci95[0], 0.509923430, 1e-8, 'lower bound, written out');
  // Relative: 2 / 1 − 1 = +100%; Fieller's ends are the ratios where (m_v − ρ m_c)² = q² (v_v + ρ² v_c).
  near(comparison.relative!, 1, 1e-12, 'relative');
  for (const end of comparison.relative_ci95!) {
    const rho = end + 1;
    near((2 - rho * 1) ** 2, q * q * (1 / 39 + rho * rho * (1 / 29)), 1e-9, `Fieller end ${end}`);
  }
  assert.ok(comparison.relative_ci95![0] < 1 && comparison.relative_ci95![1] > 1);
  // The ends are asymmetric around the estimate, as a ratio's interval should be.
  assert.ok(comparison.relative_ci95![1] - 1 > 1 - comparison.relative_ci95![0]);
});

test('cost per extra goal unit and the plain sentence', () => {
  // 1,000 participants each; control mean 1.00, variant 1.12 (+12%), an interval that excludes 0.
  const control = arm([...repeat(0, 200), ...repeat(1, 600), ...repeat(2, 200)]);
  const variant = arm([...repeat(1, 880), ...repeat(2, 120)]);
  const result = compareToControl(variant, control);
  const comparison = result.comparison!;
  assert.ok(comparison.absolute_ci95[0] > 0, JSON.stringify(comparison));
  // 37.2 extra points per participant for 0.12 extra purchases: 310 points per extra purchase.
  const cost = costPerExtraGoal(comparison, 37.2);
  near(cost!, 310, 1e-9, 'cost per extra purchase');
  const sentence = variantSentence({ name: 'variant B', exposed: 1000, controlExposed: 1000, result, label: PURCHASES, extraPointsPerParticipant: 37.2, costPerExtraGoal: cost });
  const [lo, hi] = comparison.relative_ci95!.map((x) => Math.round(x * 100));
  assert.equal(sentence, `variant B: +12% purchases per participant, 95% CI +${lo}% to +${hi}%, costs 310 points per extra purchase`);

  // An interval that includes 0: no cost per extra unit, and the sentence says so.
  const flat = compareToControl(arm([...repeat(0, 45), ...repeat(2, 55)]), arm([...repeat(0, 50), ...repeat(2, 50)]));
  assert.ok(flat.comparison!.absolute_ci95[0] < 0 && flat.comparison!.absolute_ci95[1] > 0);
  assert.equal(costPerExtraGoal(flat.comparison, 5), null);
  assert.match(
    variantSentence({ name: 'B', exposed: 100, controlExposed: 100, result: flat, label: PURCHASES, extraPointsPerParticipant: 5, costPerExtraGoal: null }),
    /^B: \+10% purchases per participant, 95% CI -\d+% to \+\d+%, no measurable effect, 5 more points per participant than control$/,
  );

  // A measurable loss.
  const worse = compareToControl(arm(repeat(0, 50).concat(repeat(1, 50))), arm(repeat(1, 50).concat(repeat(2, 50))));
  assert.equal(costPerExtraGoal(worse.comparison, 10), null);
  assert.match(
    variantSentence({ name: 'B', exposed: 100, controlExposed: 100, result: worse, label: PURCHASES, extraPointsPerParticipant: 10, costPerExtraGoal: null }),
    /^B: -67% purchases per participant, 95% CI -\d+% to -\d+%, fewer purchases than control, 10 more points per participant than control$/,
  );

  // A gain at fewer points than control.
  const cheaper = costPerExtraGoal(comparison, -3);
  assert.ok(cheaper! < 0);
  assert.match(
    variantSentence({ name: 'B', exposed: 100, controlExposed: 100, result, label: PURCHASES, extraPointsPerParticipant: -3, costPerExtraGoal: cheaper }),
    /, and saves 3 points per participant$/,
  );
});

test('small samples, no variation and a control mean of 0 are said, not hidden behind a misleading interval', () => {
  const few = compareToControl(arm(repeat(1, MIN_PARTICIPANTS_PER_ARM - 2).concat([2])), arm(repeat(0, 100).concat([1])));
  assert.equal(few.comparison, null);
  assert.deepEqual(few.warnings, ['too_few_participants']);
  assert.equal(
    variantSentence({ name: 'B', exposed: 30, controlExposed: 12, result: compareToControl(arm(repeat(1, 30)), arm(repeat(1, 12))), label: PURCHASES, extraPointsPerParticipant: 0, costPerExtraGoal: null }),
    'B: too few participants to compare yet (30 here, 12 in control; at least 30 each)',
  );

  const constant = compareToControl(arm(repeat(1, 50)), arm(repeat(1, 50)));
  assert.equal(constant.comparison, null);
  assert.deepEqual(constant.warnings, ['no_variation']);

  const fromNothing = compareToControl(arm(repeat(0, 40).concat(repeat(1, 10))), arm(repeat(0, 50)));
  assert.deepEqual(fromNothing.warnings, ['control_mean_zero']);
  assert.equal(fromNothing.comparison!.relative, null);
  assert.equal(fromNothing.comparison!.relative_ci95, null);
  near(fromNothing.comparison!.absolute, 0.2, 1e-12, 'absolute difference from a control of 0');
  assert.match(
    variantSentence({ name: 'B', exposed: 50, controlExposed: 50, result: fromNothing, label: PURCHASES, extraPointsPerParticipant: 2, costPerExtraGoal: costPerExtraGoal(fromNothing.comparison, 2) }),
    /^B: \+0\.20 purchases per participant, 95% CI \+0\.\d\d to \+0\.\d\d \(control had none\), costs 10 points per extra purchase$/,
  );

  // A control mean that is not distinguishable from 0: Fieller's set is unbounded, so no relative interval.
  const uncertain = compareToControl(arm(repeat(0, 38).concat(repeat(1, 2))), arm(repeat(0, 39).concat([1])));
  assert.deepEqual(uncertain.warnings, ['relative_unreliable']);
  assert.equal(uncertain.comparison!.relative_ci95, null);
  assert.equal(fiellerInterval(2, 1, 0.5, 1, 1.96), null);
});

// ---------------------------------------------------------------------------
// Coverage with simulated experiments whose true effect is known.

/** sfc32 (Chris Doty-Humphrey's small fast counter): a seeded generator, so the simulation is the same on every run and cannot flake. */
function seededRandom(seed: number): () => number {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed;
  const next = () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return ((t >>> 0) + 0.5) / 4294967296;
  };
  for (let i = 0; i < 15; i++) next();
  return next;
}

interface Distribution {
  describe: string;
  mean: number;
  draw: (random: () => number) => number;
}

function poisson(random: () => number, lambda: number): number {
  // Knuth's method: fine for the small means of per-participant counts.
  const limit = Math.exp(-lambda);
  let k = 0;
  let product = random();
  while (product > limit) {
    k++;
    product *= random();
  }
  return k;
}

/** Events per participant: Poisson(λ). */
const counts = (lambda: number): Distribution => ({ describe: `Poisson(${lambda})`, mean: lambda, draw: (random) => poisson(random, lambda) });

/** Spend per participant: Poisson(λ) purchases of log-normal(μ, σ) amounts, to the cent; right-skewed with many zeros. */
const spend = (lambda: number, mu: number, sigma: number): Distribution => ({
  describe: `spend: Poisson(${lambda}) × logN(${mu}, ${sigma})`,
  mean: lambda * Math.exp(mu + (sigma * sigma) / 2),
  draw: (random) => {
    let total = 0;
    for (let i = poisson(random, lambda); i > 0; i--) {
      const z = Math.sqrt(-2 * Math.log(random())) * Math.cos(2 * Math.PI * random());
      total += Math.round(Math.exp(mu + sigma * z) * 100) / 100;
    }
    return total;
  },
});

interface Scenario {
  control: Distribution;
  variant: Distribution;
  controlN: number;
  variantN: number;
}

interface Coverage {
  experiments: number;
  absoluteCovered: number;
  relativeShown: number;
  relativeCovered: number;
  meanAbsolute: number;
  sdAbsolute: number;
  meanRelative: number;
  sdRelative: number;
}

const EXPERIMENTS = 1000;

function simulate(scenario: Scenario, seed: number): Coverage {
  const random = seededRandom(seed);
  const trueAbsolute = scenario.variant.mean - scenario.control.mean;
  const trueRelative = scenario.variant.mean / scenario.control.mean - 1;
  const absolutes: number[] = [];
  const relatives: number[] = [];
  let absoluteCovered = 0;
  let relativeCovered = 0;
  for (let e = 0; e < EXPERIMENTS; e++) {
    const controlValues = Array.from({ length: scenario.controlN }, () => scenario.control.draw(random));
    const variantValues = Array.from({ length: scenario.variantN }, () => scenario.variant.draw(random));
    const { comparison } = compareToControl(arm(variantValues), arm(controlValues));
    assert.ok(comparison, 'every simulated experiment is large enough and varies');
    absolutes.push(comparison.absolute);
    if (comparison.absolute_ci95[0] <= trueAbsolute && trueAbsolute <= comparison.absolute_ci95[1]) absoluteCovered++;
    if (comparison.relative_ci95) {
      relatives.push(comparison.relative!);
      if (comparison.relative_ci95[0] <= trueRelative && trueRelative <= comparison.relative_ci95[1]) relativeCovered++;
    }
  }
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const sd = (xs: number[]) => Math.sqrt(xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
  return {
    experiments: EXPERIMENTS,
    absoluteCovered,
    relativeShown: relatives.length,
    relativeCovered,
    meanAbsolute: mean(absolutes),
    sdAbsolute: sd(absolutes),
    meanRelative: mean(relatives),
    sdRelative: sd(relatives),
  };
}

// Bands for 1,000 experiments at a true 95%: the binomial standard error is 0.0069, so
// [0.93, 0.97] is ±2.9 standard errors. The relative (Fieller) interval is
// counted over the experiments that show one, and its band is wider at the
// top: on small arms of sparse, skewed goals it is shown only when the
// control's mean happens to be clear of 0, and then leans conservative (0.978).
const ABSOLUTE_BAND: Band = [0.93, 0.97];
const RELATIVE_BAND: Band = [0.93, 0.98];
// A documented limit (docs/decisions/experiments.md): with a strongly skewed goal
// and arms of unequal size the skewness no longer cancels in the difference:
// at 80 / 400 the coverage is 0.939 (absolute) and 0.935 (relative) over
// 10,000 simulated experiments, with the misses mostly on one side (5.2% vs
// 0.9%). Pinned with a lower floor, so that a change that makes it worse is seen.
const SKEWED_UNEQUAL_BAND: Band = [0.92, 0.97];
type Band = [number, number];

const SCENARIOS: Array<Scenario & { name: string; bands?: { absolute: Band; relative: Band } }> = [];
for (const n of [30, 100, 1000]) {
  SCENARIOS.push(
    { name: `counts, +15%, ${n} per arm`, control: counts(2), variant: counts(2.3), controlN: n, variantN: n },
    { name: `counts, no effect, ${n} per arm`, control: counts(2), variant: counts(2), controlN: n, variantN: n },
    { name: `rare counts, +33%, ${n} per arm`, control: counts(0.3), variant: counts(0.4), controlN: n, variantN: n },
    { name: `skewed spend, +20%, ${n} per arm`, control: spend(1, 3, 1), variant: spend(1.2, 3, 1), controlN: n, variantN: n },
    { name: `skewed spend, no effect, ${n} per arm`, control: spend(1, 3, 1), variant: spend(1, 3, 1), controlN: n, variantN: n },
    { name: `sparse skewed spend, +20%, ${n} per arm`, control: spend(0.3, 3, 1.2), variant: spend(0.36, 3, 1.2), controlN: n, variantN: n },
  );
}
SCENARIOS.push({ name: 'counts, +15%, 200 control / 80 variant', control: counts(2), variant: counts(2.3), controlN: 200, variantN: 80 });
SCENARIOS.push({ name: 'skewed spend, +20%, 300 control / 1500 variant', control: spend(1, 3, 1), variant: spend(1.2, 3, 1), controlN: 300, variantN: 1500 });
SCENARIOS.push({
  name: 'skewed spend, +20%, 80 control / 400 variant (a documented limit)',
  control: spend(1, 3, 1),
  variant: spend(1.2, 3, 1),
  controlN: 80,
  variantN: 400,
  bands: { absolute: SKEWED_UNEQUAL_BAND, relative: SKEWED_UNEQUAL_BAND },
});

test(`simulated experiments with a known true effect: coverage of both 95% intervals and unbiased estimates (${EXPERIMENTS} experiments per scenario)`, async (t) => {
  for (const [index, scenario] of SCENARIOS.entries()) {
    await t.test(scenario.name, (st) => {
      const result = simulate(scenario, 36_000 + index);
      const trueAbsolute = scenario.variant.mean - scenario.control.mean;
      const trueRelative = scenario.variant.mean / scenario.control.mean - 1;
      const absoluteCoverage = result.absoluteCovered / result.experiments;
      const relativeCoverage = result.relativeCovered / result.relativeShown;
      st.diagnostic(
        `${scenario.control.describe} vs ${scenario.variant.describe}: absolute coverage ${absoluteCoverage.toFixed(3)}, ` +
          `relative coverage ${relativeCoverage.toFixed(3)} (shown in ${result.relativeShown}), ` +
          `mean estimate ${result.meanAbsolute.toFixed(4)} (true ${trueAbsolute.toFixed(4)}), relative ${result.meanRelative.toFixed(4)} (true ${trueRelative.toFixed(4)})`,
      );
      const bands = scenario.bands ?? { absolute: ABSOLUTE_BAND, relative: RELATIVE_BAND };
      assert.ok(absoluteCoverage >= bands.absolute[0] && absoluteCoverage <= bands.absolute[1], `absolute coverage ${absoluteCoverage}`);
      assert.ok(relativeCoverage >= bands.relative[0] && relativeCoverage <= bands.relative[1], `relative coverage ${relativeCoverage}`);
      // The difference of means is unbiased: its average over the experiments lies within 4 Monte Carlo standard errors of the truth.
      near(result.meanAbsolute, trueAbsolute, (4 * result.sdAbsolute) / Math.sqrt(result.experiments), 'mean of the estimated differences');
      // The ratio of means is biased by O(1/n) (Jensen); on large arms that is well inside the Monte Carlo error.
      if (Math.min(scenario.controlN, scenario.variantN) >= 1000) {
        near(result.meanRelative, trueRelative, (4 * result.sdRelative) / Math.sqrt(result.relativeShown), 'mean of the estimated relative differences');
      }
      // The relative interval is withheld only when the control's mean is not distinguishable from 0: sparse goals on small arms.
      if (Math.min(scenario.controlN, scenario.variantN) >= 100) assert.ok(result.relativeShown >= 0.97 * result.experiments, `relative shown in ${result.relativeShown}`);
    });
  }
});
