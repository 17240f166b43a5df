/** Query keys of one resource: `all` (everything of it), `lists()` / `list(filters)`, `detail(id)`. */
export function queryKeysFactory<R extends string>(resource: R) {
  const all = [resource] as const;
  return {
    all,
    lists: () => [...all, 'list'] as const,
    list: (filters: object) => [...all, 'list', filters] as const,
    details: () => [...all, 'detail'] as const,
    detail: (id: string, ...rest: unknown[]) => [...all, 'detail', id, ...rest] as const,
  };
}
