import { useState } from 'react';
import { Anchor, Badge, Button, Card, Group, Loader, Stack, Table, Text, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useParticipants, type ParticipantFilters } from '../../../hooks/api/participants';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { Loading, ScrollTable } from '../../../components/loading';

/** Participants, masked: search by the tenant's own id or by email, or list with a country filter. */
export function ParticipantList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [draft, setDraft] = useState<ParticipantFilters>({});
  const [filters, setFilters] = useState<ParticipantFilters>({});
  const participants = useParticipants({ ...filters, cursor: pages.cursor });
  const rows = participants.data?.participants ?? [];
  return (
    <Stack>
      <PageHeader title={t('participants.title')} />
      <Card withBorder>
        <form
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            pages.reset();
            setFilters(draft);
          }}
        >
          <Group align="flex-end" wrap="wrap">
            <TextInput label={t('participants.externalId')} value={draft.external_id ?? ''} onChange={(e) => setDraft({ ...draft, external_id: e.currentTarget.value })} />
            <TextInput label={t('participants.email')} type="email" value={draft.email ?? ''} onChange={(e) => setDraft({ ...draft, email: e.currentTarget.value })} />
            <TextInput label={t('participants.country')} maxLength={2} w={110} value={draft.country_code ?? ''} onChange={(e) => setDraft({ ...draft, country_code: e.currentTarget.value.toUpperCase() })} />
            <Button type="submit">{t('common.search')}</Button>
            <Button
              variant="default"
              onClick={() => {
                setDraft({});
                setFilters({});
                pages.reset();
              }}
            >
              {t('common.clear')}
            </Button>
          </Group>
        </form>
      </Card>
      <ErrorAlert error={participants.error} />
      {participants.isPending && <Loading />}
      {participants.data && rows.length === 0 && <Text>{t('participants.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={600}>
          <Table striped highlightOnHover data-testid="participant-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('participants.id')}</Table.Th>
                <Table.Th>{t('participants.name')}</Table.Th>
                <Table.Th>{t('participants.email')}</Table.Th>
                <Table.Th>{t('participants.country')}</Table.Th>
                <Table.Th>{t('participants.created')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((p) => (
                <Table.Tr key={p.participant_id}>
                  <Table.Td>
                    <Anchor component={Link} to={`/participants/${encodeURIComponent(p.participant_id)}`}>
                      {p.participant_id}
                    </Anchor>
                    {p.anonymized && (
                      <Badge ml="xs" color="gray.7" variant="filled" size="sm">
                        {t('participants.anonymized')}
                      </Badge>
                    )}
                  </Table.Td>
                  <Table.Td>{p.display_name ?? '—'}</Table.Td>
                  <Table.Td>{p.email ?? '—'}</Table.Td>
                  <Table.Td>{p.country_code ?? '—'}</Table.Td>
                  <Table.Td>{new Date(p.created_at).toLocaleDateString()}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={participants.data?.next_cursor} />
    </Stack>
  );
}
