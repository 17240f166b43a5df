/**
 * Reactions that modules declare in their ServiceModule (a fact handler, an
 * erasure handler) and the platform runs for whoever records the fact or the
 * erasure: each is registered once per module, and run in the order the
 * modules were loaded (by name), one after the other, with the caller's
 * arguments (its transaction first).
 */
export interface ModuleHandlers<A extends unknown[]> {
  register(module: string, handle: (...args: A) => Promise<void>): void;
  run(...args: A): Promise<void>;
}

export function moduleHandlers<A extends unknown[]>(): ModuleHandlers<A> {
  const handlers: Array<{ module: string; handle: (...args: A) => Promise<void> }> = [];
  return {
    register(module, handle) {
      if (!handlers.some((h) => h.module === module && h.handle === handle)) handlers.push({ module, handle });
    },
    async run(...args) {
      for (const { handle } of handlers) await handle(...args);
    },
  };
}
