import { useState } from 'react';
import { Button, Card, Group, Loader, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useBadges, useCreateBadge } from '../../../hooks/api/programs';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading } from '../../../components/loading';

export function BadgeList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const badges = useBadges(pages.cursor);
  const create = useCreateBadge();
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const rows = badges.data?.badges ?? [];
  return (
    <Stack>
      <PageHeader title={t('badges.title')} />
      <ErrorAlert error={badges.error} />
      {badges.isPending && <Loading />}
      {badges.data && rows.length === 0 && <Text>{t('badges.none')}</Text>}
      {rows.length > 0 && (
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('badges.code')}</Table.Th>
              <Table.Th>{t('badges.name')}</Table.Th>
              <Table.Th>{t('badges.description')}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((badge) => (
              <Table.Tr key={badge.code}>
                <Table.Td>{badge.code}</Table.Td>
                <Table.Td>{badge.name}</Table.Td>
                <Table.Td>{badge.description ?? '—'}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Pager pages={pages} nextCursor={badges.data?.next_cursor} />
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('badges.create')}
          </Title>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate({ code, name, description: description || undefined }, { onSuccess: () => { setCode(''); setName(''); setDescription(''); } });
            }}
          >
            <Group align="flex-end" wrap="wrap">
              <TextInput label={t('badges.code')} value={code} onChange={(e) => setCode(e.currentTarget.value)} required />
              <TextInput label={t('badges.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
              <TextInput label={t('badges.description')} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
              <Button type="submit" loading={create.isPending}>
                {t('badges.createSubmit')}
              </Button>
            </Group>
            <ErrorAlert error={create.error} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}
