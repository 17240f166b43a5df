import { useState } from 'react';
import { Button, Group } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** Cursor pagination: the cursors of the pages seen so far, so "Previous" goes back without the API knowing about pages. */
export function useCursorPages() {
  const [stack, setStack] = useState<Array<string | undefined>>([undefined]);
  return {
    cursor: stack[stack.length - 1],
    page: stack.length,
    next: (cursor: string) => setStack((s) => [...s, cursor]),
    previous: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
    reset: () => setStack([undefined]),
  };
}

export function Pager({ pages, nextCursor }: { pages: ReturnType<typeof useCursorPages>; nextCursor: string | null | undefined }) {
  const { t } = useTranslation();
  if (pages.page === 1 && !nextCursor) return null;
  return (
    <Group justify="space-between" component="nav" aria-label={t('common.pagination')}>
      <Button variant="default" disabled={pages.page === 1} onClick={pages.previous}>
        {t('common.previous')}
      </Button>
      <span>{t('common.page', { page: pages.page })}</span>
      <Button variant="default" disabled={!nextCursor} onClick={() => nextCursor && pages.next(nextCursor)}>
        {t('common.next')}
      </Button>
    </Group>
  );
}
