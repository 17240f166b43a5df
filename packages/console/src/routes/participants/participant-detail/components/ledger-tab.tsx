import { Table, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useLedger, type LedgerEntry } from '../../../../hooks/api/participants';
import { ErrorAlert } from '../../../../components/error-alert';
import { Pager, useCursorPages } from '../../../../components/pager';
import { ScrollTable } from '../../../../components/loading';
import { useFormat } from '../../../../lib/format';

/** Who caused an entry: the console person or API key of a direct change, the earning rule, else the kind of source. */
export function useWho() {
  const { t, i18n } = useTranslation();
  return (entry: LedgerEntry): string => {
    const actor = entry.actor;
    if (actor) return actor.name ? t(`ledger.by.${actor.type}`, { name: actor.name }) : t('ledger.by.gone', { id: actor.id });
    const key = `ledger.sources.${entry.source_kind}`;
    return i18n.exists(key) ? t(key) : entry.source_kind;
  };
}

/** The ledger, newest first: amount, reason, who caused it, the balance after. */
export function LedgerTab({ participantId }: { participantId: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const who = useWho();
  const pages = useCursorPages();
  const ledger = useLedger(participantId, pages.cursor);
  const entries = ledger.data?.entries ?? [];
  return (
    <>
      <ErrorAlert error={ledger.error} />
      {ledger.data && entries.length === 0 && <Text>{t('participant.noLedger')}</Text>}
      {entries.length > 0 && (
        <ScrollTable minWidth={360}>
          <Table striped data-testid="ledger">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('ledger.when')}</Table.Th>
                <Table.Th>{t('ledger.amount')}</Table.Th>
                <Table.Th>{t('ledger.reason')}</Table.Th>
                <Table.Th visibleFrom="sm">{t('ledger.who')}</Table.Th>
                <Table.Th>{t('ledger.balance')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {entries.map((entry) => (
                <Table.Tr key={entry.id}>
                  <Table.Td>{f.dateTime(entry.created_at)}</Table.Td>
                  <Table.Td style={{ whiteSpace: 'nowrap' }}>
                    <Text span fw={600}>
                      {entry.amount > 0 ? `+${f.number(entry.amount)}` : `−${f.number(-entry.amount)}`}
                    </Text>{' '}
                    <Text span size="xs" c="dimmed">
                      {t(`ledger.types.${entry.type}`)}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {entry.reason}
                    {/* On a phone who caused the entry sits under its reason, so the row fits the screen. */}
                    <Text size="xs" c="dimmed" hiddenFrom="sm" data-testid="ledger-who-phone">
                      {who(entry)}
                    </Text>
                  </Table.Td>
                  <Table.Td visibleFrom="sm" data-testid="ledger-who">
                    {who(entry)}
                  </Table.Td>
                  <Table.Td>{f.number(entry.available_after)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={ledger.data?.next_cursor} />
    </>
  );
}
