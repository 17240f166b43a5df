/**
 * What the machine and the service did during a benchmark, second by second: every process's CPU by kind, the
 * machine's speed, and what bench/service-probe.mjs counted inside the service. Linux's /proc.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { processCpu, processIds } from './support.js';

/** One second of a CPU timeline: when it ended (epoch ms), ms of CPU per label, and the machine's speed then. */
export interface CpuSecond {
  at: number;
  ms: Map<string, number>;
  /** The machine's speed then: the least of three timings (ms) of a fixed loop (`speedMs`). */
  speedMs: number;
}

const SPEED_LOOP_ITERATIONS = 300_000;

/**
 * The machine's speed now: the shortest of three timings of a fixed loop of integer arithmetic (0.32–0.37 ms on
 * this machine). The shortest leaves out most waits for a core; what remains grows when the core runs slower, shared
 * with a busy sibling thread of the same physical core or taken by the host. (The kernel's count of a thread's CPU
 * time advances in 4 ms ticks here: too coarse for this.)
 */
function speedMs(): number {
  let least = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = performance.now();
    let x = 0;
    for (let i = 0; i < SPEED_LOOP_ITERATIONS; i++) x = (x * 31 + i) | 0;
    // Used, so that the loop is not optimised away.
    least = Math.min(least, performance.now() - started + (x === 0.5 ? 1 : 0));
  }
  return least;
}

/**
 * Who used the machine, second by second: every process's CPU (user + system, from /proc) over each second, summed
 * by the label `labelOf` gives it (null: left out). `refresh` runs before each reading, for labels that need a lookup
 * (which backends are whose). A process first seen counts from the previous reading's time. Linux only: elsewhere
 * the timeline stays empty.
 */
export function startCpuTimeline(labelOf: (pid: number, comm: string) => string | null, refresh: () => Promise<void> = async () => undefined): { stop(): CpuSecond[] } {
  const seconds: CpuSecond[] = [];
  let previous = new Map<number, number>();
  let first = true;
  const read = () => {
    const now = new Map<number, number>();
    const ms = new Map<string, number>();
    for (const pid of processIds()) {
      const cpu = processCpu(pid);
      if (!cpu) continue;
      const total = cpu.userMs + cpu.systemMs;
      now.set(pid, total);
      const label = labelOf(pid, cpu.comm);
      if (label !== null) ms.set(label, (ms.get(label) ?? 0) + total - (previous.get(pid) ?? 0));
    }
    previous = now;
    if (!first) seconds.push({ at: Date.now(), ms, speedMs: speedMs() });
    first = false;
  };
  let stopped = false;
  const tick = async () => {
    if (stopped) return;
    try {
      await refresh();
      if (!stopped && fs.existsSync('/proc/self/stat')) read();
    } catch {
      // A reading that failed is a second missing from the timeline, not a failed benchmark.
    }
    if (!stopped) timer = setTimeout(tick, 1000 - (Date.now() % 1000));
  };
  let timer = setTimeout(tick, 0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      return seconds;
    },
  };
}

/** What bench/service-probe.mjs counted over a span of seconds: per method and path, and for the event loop's delay. */
export interface ServiceProbe {
  /** Per method and path, requests counted by bucket (its upper bound in ms). */
  routes: Map<string, Map<number, number>>;
  loop: Map<number, number>;
  /** The event loop's thread: ms on a core and ms ready but waiting for one (null off Linux). */
  thread: { ranMs: number; waitedMs: number } | null;
  /** V8's collections: how many, their pauses' sum and the longest (ms). */
  gc: { count: number; pauseMs: number; maxMs: number };
}

interface ProbeLine {
  at: number;
  routes: Record<string, Record<string, number>>;
  loop: Record<string, number>;
  thread: ServiceProbe['thread'];
  gc: ServiceProbe['gc'];
}

/** The probe's seconds that ended within [fromMs, toMs] (epoch ms), one by one, `at` the end of each. */
export function readServiceProbeSeconds(file: string, fromMs: number, toMs: number): Array<ServiceProbe & { at: number }> {
  const counts = (record: Record<string, number>) => new Map(Object.entries(record).map(([bucket, n]) => [Number(bucket), n]));
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ProbeLine)
    .filter((second) => second.at >= fromMs && second.at <= toMs)
    .map((second) => ({ ...second, routes: new Map(Object.entries(second.routes).map(([route, record]) => [route, counts(record)])), loop: counts(second.loop) }));
}

/** The probe's seconds that ended within [fromMs, toMs] (epoch ms), merged. */
export function readServiceProbe(file: string, fromMs: number, toMs: number): ServiceProbe {
  const merged: ServiceProbe = { routes: new Map(), loop: new Map(), thread: { ranMs: 0, waitedMs: 0 }, gc: { count: 0, pauseMs: 0, maxMs: 0 } };
  const add = (into: Map<number, number>, counts: Map<number, number>) => {
    for (const [bucket, n] of counts) into.set(bucket, (into.get(bucket) ?? 0) + n);
  };
  for (const second of readServiceProbeSeconds(file, fromMs, toMs)) {
    for (const [route, counts] of second.routes) {
      if (!merged.routes.has(route)) merged.routes.set(route, new Map());
      add(merged.routes.get(route)!, counts);
    }
    add(merged.loop, second.loop);
    merged.thread = merged.thread && second.thread && { ranMs: merged.thread.ranMs + second.thread.ranMs, waitedMs: merged.thread.waitedMs + second.thread.waitedMs };
    merged.gc = { count: merged.gc.count + second.gc.count, pauseMs: merged.gc.pauseMs + second.gc.pauseMs, maxMs: Math.max(merged.gc.maxMs, second.gc.maxMs) };
  }
  return merged;
}

/** The p-th percentile (ms) of a probe's buckets: the upper bound of the bucket it falls in (bench/service-probe.mjs names each by it); NaN when empty. */
export function probePercentile(buckets: Map<number, number> | undefined, p: number): number {
  const sorted = [...(buckets ?? [])].sort(([a], [b]) => a - b);
  const rank = Math.ceil((p / 100) * probeCount(buckets));
  let seen = 0;
  for (const [upperMs, n] of sorted) {
    seen += n;
    if (seen >= rank) return upperMs;
  }
  return NaN;
}

/** How many requests a probe's buckets hold. */
export const probeCount = (buckets: Map<number, number> | undefined): number => [...(buckets ?? [])].reduce((sum, [, n]) => sum + n, 0);
