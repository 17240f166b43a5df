import { useState } from 'react';
import { Anchor, Badge, Button, Card, Group, NumberInput, Select, SimpleGrid, Stack, Table, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { useCreateReward, useRewards } from '../../../hooks/api/rewards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { isLowStock, remaining } from '../common/stock';
import { CODE_SOURCES, METADATA_EXAMPLES, parseMetadata, REWARD_TYPES, type CodeSource, type RewardType } from '../common/reward-form';

export function RewardList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const rewards = useRewards(pages.cursor);
  const rows = rewards.data?.rewards ?? [];
  return (
    <Stack>
      <PageHeader title={t('rewards.title')} />
      <ErrorAlert error={rewards.error} />
      {rewards.isPending && <Loading />}
      {rewards.data && rows.length === 0 && <Text>{t('rewards.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={720}>
          <Table striped data-testid="rewards">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('rewards.name')}</Table.Th>
                <Table.Th>{t('rewards.type')}</Table.Th>
                <Table.Th>{t('rewards.codeSource')}</Table.Th>
                <Table.Th>{t('rewards.claimed')}</Table.Th>
                <Table.Th>{t('rewards.remaining')}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((reward) => {
                const left = remaining(reward);
                return (
                  <Table.Tr key={reward.id}>
                    <Table.Td>
                      <Anchor component={Link} to={`/rewards/${encodeURIComponent(reward.id)}`}>
                        {reward.name}
                      </Anchor>
                      {!reward.active && (
                        <Badge ml="xs" color="gray.7" variant="filled">
                          {t('rewards.inactive')}
                        </Badge>
                      )}
                    </Table.Td>
                    <Table.Td>{t(`rewards.types.${reward.type}`)}</Table.Td>
                    <Table.Td>{t(`rewards.sources.${reward.code_source}`)}</Table.Td>
                    <Table.Td>{reward.claimed_count.toLocaleString()}</Table.Td>
                    <Table.Td>
                      <Group gap={6}>
                        {left === null ? t('rewards.unlimited') : left.toLocaleString()}
                        {isLowStock(reward) && (
                          <Badge color="red.9" variant="filled" data-testid="low-stock">
                            {t('rewards.lowStock')}
                          </Badge>
                        )}
                      </Group>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={rewards.data?.next_cursor} />
      <RoleGuard permission="programs:write">
        <CreateReward />
      </RoleGuard>
    </Stack>
  );
}

function CreateReward() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const create = useCreateReward();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [type, setType] = useState<RewardType>('coupon');
  const [codeSource, setCodeSource] = useState<CodeSource>('pool');
  const [inventory, setInventory] = useState<number | string>('');
  const [metadata, setMetadata] = useState(JSON.stringify(METADATA_EXAMPLES.coupon, null, 2));
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rewards.create')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate(
            {
              ...(id.trim() ? { id: id.trim() } : {}),
              name,
              description: description.trim() || undefined,
              type,
              code_source: codeSource,
              inventory: inventory === '' ? null : Number(inventory),
              // Text that is not an object is sent as it is, so the server's detail names the problem.
              metadata: parseMetadata(metadata) ?? (metadata.trim() ? (metadata as unknown as Record<string, unknown>) : undefined),
            },
            { onSuccess: (reward) => navigate(`/rewards/${encodeURIComponent(reward.id)}`) },
          );
        }}
      >
        <Stack gap="sm">
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
            <TextInput label={t('rewards.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
            <TextInput label={t('rewards.id')} description={t('rewards.idHelp')} value={id} onChange={(e) => setId(e.currentTarget.value)} />
            <Select
              label={t('rewards.type')}
              data={REWARD_TYPES.map((value) => ({ value, label: t(`rewards.types.${value}`) }))}
              value={type}
              onChange={(value) => {
                if (!value) return;
                setType(value as RewardType);
                setMetadata(JSON.stringify(METADATA_EXAMPLES[value as RewardType], null, 2));
              }}
              allowDeselect={false}
            />
            <Select
              label={t('rewards.codeSource')}
              data={CODE_SOURCES.map((value) => ({ value, label: t(`rewards.sources.${value}`) }))}
              value={codeSource}
              onChange={(value) => value && setCodeSource(value as CodeSource)}
              allowDeselect={false}
            />
            <NumberInput label={t('rewards.inventory')} description={t('rewards.inventoryHelp')} min={0} allowDecimal={false} value={inventory} onChange={setInventory} />
          </SimpleGrid>
          <Textarea label={t('rewards.description')} autosize minRows={1} value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          <Textarea label={t('rewards.metadata')} description={t('rewards.metadataHelp')} autosize minRows={3} styles={{ input: { fontFamily: 'monospace' } }} value={metadata} onChange={(e) => setMetadata(e.currentTarget.value)} />
          <ErrorAlert error={create.error} />
          <Group>
            <Button type="submit" loading={create.isPending}>
              {t('rewards.createSubmit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
