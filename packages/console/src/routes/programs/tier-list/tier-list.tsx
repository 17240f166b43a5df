import { Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCreateTier, useDeleteTier, useTiers, useUpdateTier } from '../../../hooks/api/programs';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { EditDialog } from '../common/edit-dialog';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { useFormat } from '../../../lib/format';

interface TierValues {
  code: string;
  name: string;
  min_lifetime_points: number | undefined;
}

export function TierList() {
  const { t } = useTranslation();
  const tiers = useTiers();
  const create = useCreateTier();
  const remove = useDeleteTier();
  const canWrite = useCan('programs:write');
  const f = useFormat();
  const form = useApiForm<TierValues>('createTier', { defaultValues: { code: '', name: '', min_lifetime_points: 0 } });
  const rows = tiers.data?.tiers ?? [];
  return (
    <Stack>
      <PageHeader title={t('tiers.title')} />
      <ErrorAlert error={tiers.error} />
      {tiers.isPending && <Loading />}
      {tiers.data && rows.length === 0 && <Text>{t('tiers.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={600}>
          <Table striped data-testid="tiers">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('tiers.level')}</Table.Th>
                <Table.Th>{t('tiers.name')}</Table.Th>
                <Table.Th>{t('tiers.code')}</Table.Th>
                <Table.Th>{t('tiers.threshold')}</Table.Th>
                {canWrite && <Table.Th>{t('common.actions')}</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((tier) => (
                <Table.Tr key={tier.code}>
                  <Table.Td>{tier.level}</Table.Td>
                  <Table.Td>{tier.name}</Table.Td>
                  <Table.Td>{tier.code}</Table.Td>
                  <Table.Td>{f.number(tier.min_lifetime_points)}</Table.Td>
                  {canWrite && (
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        <TierEdit tier={tier} />
                        <ConfirmButton
                          size="compact-sm"
                          variant="outline"
                          label={t('common.delete')}
                          aria-label={t('tiers.deleteNamed', { name: tier.name })}
                          title={t('tiers.deleteTitle')}
                          message={t('tiers.deleteConfirm', { name: tier.name })}
                          confirmLabel={t('common.delete')}
                          onConfirm={() => remove.mutateAsync(tier.code)}
                        />
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('tiers.create')}
          </Title>
          <form
            noValidate
            onSubmit={form.submit(async (values) => {
              await create.mutateAsync({ code: values.code, name: values.name, min_lifetime_points: values.min_lifetime_points! });
              form.reset();
            })}
          >
            <Group align="flex-start" wrap="wrap">
              <TextInput label={t('tiers.code')} {...form.field('code')} />
              <TextInput label={t('tiers.name')} {...form.field('name')} />
              <TextInput label={t('tiers.threshold')} {...form.field('min_lifetime_points', { number: true })} />
              <Button type="submit" mt={24} loading={form.formState.isSubmitting}>
                {t('tiers.createSubmit')}
              </Button>
            </Group>
            <FormErrors form={form} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}

function TierEdit({ tier }: { tier: { code: string; name: string; min_lifetime_points: number } }) {
  const { t } = useTranslation();
  const update = useUpdateTier();
  const form = useApiForm<Omit<TierValues, 'code'>>('updateTier');
  return (
    <EditDialog
      size="compact-sm"
      label={t('tiers.edit')}
      aria-label={t('tiers.editNamed', { name: tier.name })}
      title={t('tiers.editTitle', { name: tier.name })}
      submitLabel={t('tiers.save')}
      form={form}
      values={() => ({ name: tier.name, min_lifetime_points: tier.min_lifetime_points })}
      onSubmit={(values) => update.mutateAsync({ code: tier.code, body: { name: values.name, min_lifetime_points: values.min_lifetime_points } })}
    >
      <TextInput label={t('tiers.name')} {...form.field('name', { required: true })} data-autofocus />
      <TextInput label={t('tiers.threshold')} {...form.field('min_lifetime_points', { number: true, required: true })} />
    </EditDialog>
  );
}
