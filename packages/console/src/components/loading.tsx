import { Loader, Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** The loading indicator, announced to screen readers. */
export function Loading() {
  const { t } = useTranslation();
  return <Loader role="status" aria-label={t('common.loading')} />;
}

/** A table that scrolls sideways on narrow screens; the scrolling region takes the keyboard focus so it can be scrolled without a mouse. */
export function ScrollTable({ minWidth, children }: { minWidth: number; children: ReactNode }) {
  return (
    <Table.ScrollContainer minWidth={minWidth} type="native" tabIndex={0}>
      {children}
    </Table.ScrollContainer>
  );
}
