/**
 * Work deferred to its first use, and the check that all of it can be done.
 *
 * Every route's request validators and response serializers are compiled
 * when a request first needs them rather than when the app starts: compiling
 * all of them at start (about 300 routes, each with its bodies and a dozen
 * answers) took most of the start-up and left some 70 MB of resident memory
 * behind, in compiled code nobody had called and in the garbage of compiling
 * it, which V8 keeps as heap. A route's first request pays its compilation
 * (milliseconds) once per process.
 *
 * A schema that cannot be compiled would then fail at its first request
 * instead of at start, so everything deferred here is registered, and
 * `compileEverythingDeferred` does it all at once: the test suite calls it on
 * a built app (test/schemas-compile.test.ts), so a broken schema still fails
 * before it ships.
 */

const waiting = new Set<() => unknown>();

/** A getter that runs `build` on its first call and returns its result ever after. */
export function onFirstUse<T>(build: () => T): () => T {
  let built: { value: T } | null = null;
  const get = (): T => {
    if (!built) {
      built = { value: build() };
      waiting.delete(get);
    }
    return built.value;
  };
  waiting.add(get);
  return get;
}

/** Runs every deferred build not yet run; returns how many ran. Throws the first failure. */
export function compileEverythingDeferred(): number {
  const pending = [...waiting];
  for (const get of pending) get();
  return pending.length;
}
