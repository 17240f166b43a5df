import { Anchor, Badge, Button, Card, Group, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { Controller } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { useCreateReward, useRewards } from '../../../hooks/api/rewards';
import { ErrorAlert } from '../../../components/error-alert';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { useFormat } from '../../../lib/format';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { RoleGuard } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { isLowStock, remaining } from '../common/stock';
import { CODE_SOURCES, METADATA_EXAMPLES, REWARD_TYPES, type CodeSource, type RewardType } from '../common/reward-form';
import { createBody, newRewardValues, RewardCommonFields, type RewardValues } from '../common/reward-fields';
import { MetadataEditor } from '../common/metadata-editor';

export function RewardList() {
  const { t } = useTranslation();
  const f = useFormat();
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
                    <Table.Td>{f.number(reward.claimed_count)}</Table.Td>
                    <Table.Td>
                      <Group gap={6}>
                        {left === null ? t('rewards.unlimited') : f.number(left)}
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
  const f = useFormat();
  const navigate = useNavigate();
  const create = useCreateReward();
  const form = useApiForm<RewardValues>('createReward', { defaultValues: newRewardValues() });
  const type = form.watch('type');
  const codeSource = form.watch('code_source');
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {t('rewards.create')}
      </Title>
      <form
        noValidate
        onSubmit={form.submit(async (values) => {
          const reward = await create.mutateAsync(createBody(values, f));
          navigate(`/rewards/${encodeURIComponent(reward.id)}`);
        })}
      >
        <Stack gap="sm">
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
            <TextInput label={t('rewards.id')} {...form.field('id')} description={t('rewards.idHelp')} />
            <Controller
              control={form.control}
              name="type"
              render={({ field }) => (
                <Select
                  label={t('rewards.type')}
                  data={REWARD_TYPES.map((value) => ({ value, label: t(`rewards.types.${value}`) }))}
                  value={field.value}
                  onChange={(value) => {
                    if (!value) return;
                    field.onChange(value);
                    // Each type has its own details: start from the new type's example.
                    form.setValue('metadata', { ...METADATA_EXAMPLES[value as RewardType] });
                  }}
                  allowDeselect={false}
                />
              )}
            />
            <Controller
              control={form.control}
              name="code_source"
              render={({ field }) => (
                <Select
                  label={t('rewards.codeSource')}
                  data={CODE_SOURCES.map((value) => ({ value, label: t(`rewards.sources.${value}`) }))}
                  value={field.value}
                  onChange={(value) => value && field.onChange(value as CodeSource)}
                  allowDeselect={false}
                />
              )}
            />
            {codeSource === 'generated' && <TextInput label={t('rewards.codePrefix')} {...form.field('code_prefix')} />}
          </SimpleGrid>
          <RewardCommonFields form={form} disabled={false} editing={false} />
          <MetadataEditor key={type} form={form} type={type} disabled={false} />
          <FormErrors form={form} />
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {t('rewards.createSubmit')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
