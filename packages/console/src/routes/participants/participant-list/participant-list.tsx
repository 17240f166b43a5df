import { useState } from 'react';
import { Anchor, Badge, Button, Card, Group, Stack, Switch, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useParticipants, useParticipantSearch, type ParticipantProfile } from '../../../hooks/api/participants';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { useFormat, ZoneNote } from '../../../lib/format';

const detailLink = (id: string) => `/participants/${encodeURIComponent(id)}`;

/** The search's answer: the count first, the exact id on top, each hit one line that links to the person. */
function SearchResults({ text }: { text: string }) {
  const { t } = useTranslation();
  const f = useFormat();
  const search = useParticipantSearch(text);
  const found = search.data;
  return (
    <Card withBorder aria-label={t('participants.results')} component="section">
      <ErrorAlert error={search.error} />
      {search.isPending && <Loading />}
      {found && (
        <Stack gap="xs">
          <Text fw={600} role="status" data-testid="search-count">
            {t('participants.matches', { count: found.participants.length, text })}
          </Text>
          {found.kind === 'email' && (
            <Text size="sm" c="dimmed">
              {t('participants.byEmail')}
            </Text>
          )}
          <Stack gap={4} component="ul" style={{ listStyle: 'none', padding: 0, margin: 0 }} data-testid="search-results">
            {found.participants.map((p) => (
              <li key={p.participant_id}>
                <Group gap="xs" wrap="wrap">
                  <Anchor component={Link} to={detailLink(p.participant_id)} fw={600}>
                    {p.participant_id}
                  </Anchor>
                  {found.exact === p.participant_id && (
                    <Badge size="sm" variant="light" color="blue.9">
                      {t('participants.exact')}
                    </Badge>
                  )}
                  {p.anonymized && (
                    <Badge size="sm" color="gray.7" variant="filled">
                      {t('participants.anonymized')}
                    </Badge>
                  )}
                  <Text size="sm" c="dimmed">
                    {[p.display_name, p.email, p.country_code, f.date(p.created_at)].filter(Boolean).join(' · ')}
                  </Text>
                </Group>
              </li>
            ))}
          </Stack>
        </Stack>
      )}
    </Card>
  );
}

function ParticipantTable({ rows }: { rows: ParticipantProfile[] }) {
  const { t } = useTranslation();
  const f = useFormat();
  return (
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
                <Anchor component={Link} to={detailLink(p.participant_id)}>
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
              <Table.Td>{f.date(p.created_at)}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </ScrollTable>
  );
}

function Browse() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const [includeTest, setIncludeTest] = useState(false);
  const participants = useParticipants(pages.cursor, includeTest);
  const rows = participants.data?.participants ?? [];
  return (
    <Stack component="section" aria-labelledby="browse-heading">
      <Title order={2} size="h4" id="browse-heading">
        {t('participants.browse')}
      </Title>
      <Switch
        label={t('participants.showTest')}
        checked={includeTest}
        onChange={(e) => {
          pages.reset();
          setIncludeTest(e.currentTarget.checked);
        }}
      />
      <ErrorAlert error={participants.error} />
      {participants.isPending && <Loading />}
      {participants.data && rows.length === 0 && <Text>{t('participants.none')}</Text>}
      {rows.length > 0 && <ParticipantTable rows={rows} />}
      <Pager pages={pages} nextCursor={participants.data?.next_cursor} />
    </Stack>
  );
}

/** Participants, masked: one search box (email by its hash, id, external id or key:value), or the list page by page. */
export function ParticipantList() {
  const { t } = useTranslation();
  const [draft, setDraft] = useState('');
  const [text, setText] = useState('');
  return (
    <Stack>
      <PageHeader title={t('participants.title')}>
        <Group gap="xs" aria-label={t('participants.actions')} role="group">
          <RoleGuard permission="participants:write">
            <Button component={Link} to="/participants/import" variant="default" size="xs">
              {t('participants.import')}
            </Button>
            <Button component={Link} to="/participants/bulk-grant" variant="default" size="xs">
              {t('participants.bulkGrant')}
            </Button>
          </RoleGuard>
          <Button component={Link} to="/participants/export" variant="default" size="xs">
            {t('participants.export')}
          </Button>
        </Group>
      </PageHeader>
      <Card withBorder>
        <form
          role="search"
          onSubmit={(event) => {
            event.preventDefault();
            setText(draft.trim());
          }}
        >
          <Group align="flex-end" wrap="wrap">
            <TextInput
              label={t('participants.find')}
              description={t('participants.findHelp')}
              value={draft}
              onChange={(e) => setDraft(e.currentTarget.value)}
              style={{ flex: '1 1 18rem' }}
              autoComplete="off"
              spellCheck={false}
            />
            <Button type="submit">{t('common.search')}</Button>
            {text && (
              <Button
                variant="default"
                onClick={() => {
                  setDraft('');
                  setText('');
                }}
              >
                {t('common.clear')}
              </Button>
            )}
          </Group>
        </form>
      </Card>
      <ZoneNote />
      {text ? <SearchResults text={text} /> : <Browse />}
    </Stack>
  );
}
