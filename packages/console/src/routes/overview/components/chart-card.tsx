import type { ReactNode } from 'react';
import { Card, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ScrollTable } from '../../../components/loading';

export interface Series<Row> {
  name: keyof Row & string;
  label: string;
  color: string;
}

/** The charts are pictures for sighted readers (hidden from assistive technology); their figures are in the table beside each. So they take no keyboard focus either. */
export const NOT_FOCUSABLE = { accessibilityLayer: false, tabIndex: -1 };
/** Counts have whole-number ticks only: no "0.5 events". */
export const COUNT_AXIS = { allowDecimals: false };

/**
 * The series worth drawing: a series that is zero on every day would lie as a
 * flat line along the axis over another series' zeros (and hide it), so it is
 * left out and named under the chart instead.
 */
export function drawnSeries<Row>(rows: readonly Row[], series: ReadonlyArray<Series<Row>>): { drawn: Array<Series<Row>>; empty: Array<Series<Row>> } {
  const drawn = series.filter((s) => rows.some((row) => Number(row[s.name]) !== 0));
  return { drawn, empty: series.filter((s) => !drawn.includes(s)) };
}

/** A chart with its figures also as a table, for screen readers and for reading exact values; series without any value are named, not drawn. */
export function ChartCard<Row extends Record<string, unknown>>({
  title,
  rows,
  rowKey,
  keyLabel,
  series,
  format,
  children,
  note,
  tableSeries = series,
}: {
  title: string;
  rows: readonly Row[];
  rowKey: keyof Row & string;
  keyLabel: string;
  series: ReadonlyArray<Series<Row>>;
  /** A table cell's value in words (a count, or money for money columns). */
  format: (value: number | null, column: keyof Row & string) => string;
  /** The chart, given the series to draw (none when nothing happened). */
  children: (drawn: Array<Series<Row>>) => ReactNode;
  note?: ReactNode;
  /** The columns of the table, when they are more than the chart draws (the forecast's points and money). */
  tableSeries?: ReadonlyArray<Series<Row>>;
}) {
  const { t } = useTranslation();
  const { drawn, empty } = drawnSeries(rows, series);
  return (
    <Card withBorder padding="md" component="figure" m={0} aria-label={title}>
      <Title order={2} size="h4" mb="sm" component="figcaption">
        {title}
      </Title>
      {drawn.length === 0 ? (
        <Text c="dimmed" size="sm" py="xl" ta="center">
          {t('money.nothingToDraw')}
        </Text>
      ) : (
        <div aria-hidden="true">{children(drawn)}</div>
      )}
      {drawn.length > 0 && empty.length > 0 && (
        <Text size="xs" c="dimmed" mt={4}>
          {t('money.notDrawn', { series: empty.map((s) => s.label).join(', ') })}
        </Text>
      )}
      {note}
      <details>
        <summary>{t('overview.asTable')}</summary>
        <ScrollTable minWidth={300}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{keyLabel}</Table.Th>
                {tableSeries.map((s) => (
                  <Table.Th key={s.name}>{s.label}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => (
                <Table.Tr key={String(row[rowKey])}>
                  <Table.Td>{String(row[rowKey])}</Table.Td>
                  {tableSeries.map((s) => (
                    <Table.Td key={s.name}>{format(row[s.name] as number | null, s.name)}</Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      </details>
    </Card>
  );
}
