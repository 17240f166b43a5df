/**
 * Loaded into a benchmark's service process (`node --import`, startServiceProcess's `probeFile`): where a request's
 * time goes, from inside the service. Appends one JSON line per second to BENCH_SERVICE_PROBE_FILE:
 *
 * - `routes`: per method and path (query left out), how long each request took in the service, from its headers
 *   parsed (`http.server.request.start`) to its last byte handed to the socket (`http.server.response.finish`);
 * - `loop`: how late a timer due every LOOP_TICK_MS ran, the event loop's delay: the time a request that has
 *   arrived waits before the service reads it, whether the loop was busy or the process waited for a core;
 * - `thread`: the event loop's thread in that second, from the kernel (`/proc/thread-self/schedstat`, Linux only): ms it
 *   ran on a core (`ranMs`) and ms it was ready but waited for one (`waitedMs`);
 * - `gc`: V8's collections that ended in that second: how many, their pauses' sum and longest (ms).
 *
 * With BENCH_SERVICE_PROBE_PROFILE_DIR, it also profiles the service's CPU in windows of PROFILE_WINDOW_MS, one
 * `<end, epoch ms>.cpuprofile` each, to compare the seconds before and after an event (a rebuild, a stall).
 *
 * Each as counts per bucket of durations (`bucketOf`, named by its upper bound in ms), so that the benchmark can merge
 * the seconds of a phase and take its percentiles (`bench/support.ts`, `readServiceProbe`). Plain JavaScript: the
 * service runs compiled.
 */
import dc from 'node:diagnostics_channel';
import fs from 'node:fs';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import inspector from 'node:inspector';
import path from 'node:path';

const file = process.env.BENCH_SERVICE_PROBE_FILE;
const LOOP_TICK_MS = 5;
const profileDir = process.env.BENCH_SERVICE_PROBE_PROFILE_DIR;
const PROFILE_WINDOW_MS = 5000;
/**
 * Buckets 2% wide from 1 µs, each named by its upper bound in ms: a duration in [1.02^i, 1.02^(i+1)) µs counts
 * under 1.02^(i+1) / 1000. The reader needs no formula: a percentile is the name of the bucket it falls in.
 */
const bucketOf = (ms) => 1.02 ** (Math.max(0, Math.floor(Math.log(Math.max(ms * 1000, 1)) / Math.log(1.02))) + 1) / 1000;

if (profileDir) {
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  setInterval(async () => {
    const { profile } = await post('Profiler.stop');
    await post('Profiler.start');
    fs.writeFileSync(path.join(profileDir, `${Date.now()}.cpuprofile`), JSON.stringify(profile));
  }, PROFILE_WINDOW_MS).unref();
}

if (file) {
  /** @type {WeakMap<object, number>} */
  const started = new WeakMap();
  /** @type {Map<string, Map<number, number>>} */
  let routes = new Map();
  /** @type {Map<number, number>} */
  let loop = new Map();
  const count = (buckets, ms) => {
    const bucket = bucketOf(ms);
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
  };
  dc.subscribe('http.server.request.start', ({ request }) => started.set(request, performance.now()));
  dc.subscribe('http.server.response.finish', ({ request }) => {
    const at = started.get(request);
    if (at === undefined) return;
    const key = `${request.method} ${request.url.split('?')[0]}`;
    let buckets = routes.get(key);
    if (!buckets) routes.set(key, (buckets = new Map()));
    count(buckets, performance.now() - at);
  });
  let gc = { count: 0, pauseMs: 0, maxMs: 0 };
  new PerformanceObserver((list) => {
    for (const { duration } of list.getEntries()) {
      gc.count += 1;
      gc.pauseMs += duration;
      gc.maxMs = Math.max(gc.maxMs, duration);
    }
  }).observe({ entryTypes: ['gc'] });
  /** The main thread's time on a core and waiting for one, ns (null where /proc is not Linux's). */
  const schedstat = () => {
    try {
      const [ran, waited] = fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
      return { ran, waited };
    } catch {
      return null;
    }
  };
  let sched = schedstat();
  let due = performance.now() + LOOP_TICK_MS;
  setInterval(() => {
    const now = performance.now();
    count(loop, Math.max(0, now - due));
    due = now + LOOP_TICK_MS;
  }, LOOP_TICK_MS).unref();
  setInterval(() => {
    const now = schedstat();
    const line = {
      at: Date.now(),
      routes: Object.fromEntries([...routes].map(([key, buckets]) => [key, Object.fromEntries(buckets)])),
      loop: Object.fromEntries(loop),
      thread: now && sched ? { ranMs: (now.ran - sched.ran) / 1e6, waitedMs: (now.waited - sched.waited) / 1e6 } : null,
      gc,
    };
    routes = new Map();
    loop = new Map();
    gc = { count: 0, pauseMs: 0, maxMs: 0 };
    sched = now;
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, 1000).unref();
}
