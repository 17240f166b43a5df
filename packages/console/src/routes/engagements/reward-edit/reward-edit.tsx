import { useEffect, useState } from 'react';
import { Alert, Anchor, Badge, Button, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useParams } from 'react-router';
import { useReward, useUpdateReward, type Reward } from '../../../hooks/api/rewards';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { useCan } from '../../../components/permission';
import { Loading } from '../../../components/loading';
import { isLowStock, LOW_STOCK_UNITS, remaining } from '../common/stock';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { useFormat } from '../../../lib/format';
import { rewardValuesOf, RewardCommonFields, updateBody, type RewardValues } from '../common/reward-fields';
import { MetadataEditor } from '../common/metadata-editor';
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
  const f = useFormat();
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
            <Table.Td>{reward.inventory === null ? t('rewards.unlimited') : f.number(reward.inventory)}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>{t('rewards.claimed')}</Table.Th>
            <Table.Td>{f.number(reward.claimed_count)}</Table.Td>
          </Table.Tr>
          {reward.codes_available !== null && (
            <Table.Tr>
              <Table.Th>{t('rewards.codesAvailable')}</Table.Th>
              <Table.Td data-testid="codes-available">{f.number(reward.codes_available)}</Table.Td>
            </Table.Tr>
          )}
          <Table.Tr>
            <Table.Th>{t('rewards.remaining')}</Table.Th>
            <Table.Td>
              {left === null ? t('rewards.unlimited') : f.number(left)}{' '}
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
  const f = useFormat();
  const update = useUpdateReward(reward.id);
  const form = useApiForm<RewardValues>('updateReward', { defaultValues: rewardValuesOf(reward, f) });
  const [saved, setSaved] = useState(false);
  useEffect(() => form.reset(rewardValuesOf(reward, f)), [reward, f, form]);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rewards.details')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          setSaved(false);
          await update.mutateAsync(updateBody(values, f));
          setSaved(true);
        })}
      >
        <Stack gap="sm">
          <Text size="sm">
            {t('rewards.typeAndSource', { type: t(`rewards.types.${reward.type}`), source: t(`rewards.sources.${reward.code_source}`) })}
          </Text>
          <RewardCommonFields form={form} disabled={disabled} editing />
          <MetadataEditor form={form} type={reward.type} disabled={disabled} />
          {!disabled && <FormErrors form={form} />}
          {!disabled && (
            <Group>
              <Button type="submit" loading={form.formState.isSubmitting}>
                {t('rewards.save')}
              </Button>
              {saved && !form.formState.isDirty && (
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
