import { useEffect, useState } from 'react';
import { Alert, Anchor, Badge, Button, Card, Group, NumberInput, SimpleGrid, Stack, Switch, Table, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useReward, useUpdateReward, type Reward } from '../../../hooks/api/rewards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { isLowStock, LOW_STOCK_UNITS, remaining } from '../common/stock';
import { parseMetadata } from '../common/reward-form';
import { CodeImport } from './components/code-import';

export function RewardEdit() {
  const { t } = useTranslation();
  const rewardId = useParams().rewardId!;
  const reward = useReward(rewardId);
  const canWrite = useCan('programs:write');
  if (reward.isPending) return <Loading />;
  return (
    <Stack>
      <Anchor component={Link} to="/rewards" size="sm">
        ← {t('rewards.title')}
      </Anchor>
      <PageHeader title={t('rewards.edit', { name: reward.data?.name ?? rewardId })} />
      <ErrorAlert error={reward.error} />
      {reward.data && (
        <>
          <Stock reward={reward.data} />
          <SimpleGrid cols={{ base: 1, lg: 2 }}>
            <RewardForm reward={reward.data} disabled={!canWrite} />
            {reward.data.code_source === 'pool' && canWrite && <CodeImport rewardId={reward.data.id} />}
          </SimpleGrid>
        </>
      )}
    </Stack>
  );
}

/** What is left to hand out, and a warning when little is. */
function Stock({ reward }: { reward: Reward }) {
  const { t } = useTranslation();
  const left = remaining(reward);
  return (
    <Stack gap="xs">
      {isLowStock(reward) && (
        <Alert color="red" variant="light" role="alert" title={t('rewards.lowStock')} data-testid="low-stock-warning">
          {t('rewards.lowStockExplain', { left, threshold: LOW_STOCK_UNITS })}
        </Alert>
      )}
      <Table withTableBorder w="auto" data-testid="stock">
        <Table.Tbody>
          <Table.Tr>
            <Table.Th>{t('rewards.inventory')}</Table.Th>
            <Table.Td>{reward.inventory === null ? t('rewards.unlimited') : reward.inventory.toLocaleString()}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>{t('rewards.claimed')}</Table.Th>
            <Table.Td>{reward.claimed_count.toLocaleString()}</Table.Td>
          </Table.Tr>
          {reward.codes_available !== null && (
            <Table.Tr>
              <Table.Th>{t('rewards.codesAvailable')}</Table.Th>
              <Table.Td data-testid="codes-available">{reward.codes_available.toLocaleString()}</Table.Td>
            </Table.Tr>
          )}
          <Table.Tr>
            <Table.Th>{t('rewards.remaining')}</Table.Th>
            <Table.Td>
              {left === null ? t('rewards.unlimited') : left.toLocaleString()}{' '}
              <Badge color={reward.active ? 'teal.9' : 'gray.7'} variant="filled" ml="xs">
                {reward.active ? t('rewards.active') : t('rewards.inactive')}
              </Badge>
            </Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
    </Stack>
  );
}

function RewardForm({ reward, disabled }: { reward: Reward; disabled: boolean }) {
  const { t } = useTranslation();
  const update = useUpdateReward(reward.id);
  const [name, setName] = useState(reward.name);
  const [description, setDescription] = useState(reward.description ?? '');
  const [inventory, setInventory] = useState<number | string>(reward.inventory ?? '');
  const [active, setActive] = useState(reward.active);
  const [metadata, setMetadata] = useState(JSON.stringify(reward.metadata, null, 2));
  useEffect(() => {
    setName(reward.name);
    setDescription(reward.description ?? '');
    setInventory(reward.inventory ?? '');
    setActive(reward.active);
    setMetadata(JSON.stringify(reward.metadata, null, 2));
  }, [reward]);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rewards.details')}
      </Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          update.mutate({
            name,
            description: description.trim() || undefined,
            inventory: inventory === '' ? null : Number(inventory),
            active,
            metadata: parseMetadata(metadata) ?? (metadata as unknown as Record<string, unknown>),
          });
        }}
      >
        <Stack gap="sm">
          <Text size="sm">
            {t('rewards.typeAndSource', { type: t(`rewards.types.${reward.type}`), source: t(`rewards.sources.${reward.code_source}`) })}
          </Text>
          <TextInput label={t('rewards.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required disabled={disabled} />
          <Textarea label={t('rewards.description')} autosize minRows={1} value={description} onChange={(e) => setDescription(e.currentTarget.value)} disabled={disabled} />
          <NumberInput label={t('rewards.inventory')} description={t('rewards.inventoryHelp')} min={0} allowDecimal={false} value={inventory} onChange={setInventory} disabled={disabled} />
          <Switch label={t('rewards.activeLabel')} checked={active} onChange={(e) => setActive(e.currentTarget.checked)} disabled={disabled} />
          <Textarea label={t('rewards.metadata')} description={t('rewards.metadataHelp')} autosize minRows={3} styles={{ input: { fontFamily: 'monospace' } }} value={metadata} onChange={(e) => setMetadata(e.currentTarget.value)} disabled={disabled} />
          <ErrorAlert error={update.error} />
          {!disabled && (
            <Group>
              <Button type="submit" loading={update.isPending}>
                {t('rewards.save')}
              </Button>
              {update.isSuccess && (
                <Text size="sm" role="status">
                  {t('rewards.saved')}
                </Text>
              )}
            </Group>
          )}
        </Stack>
      </form>
    </Card>
  );
}
