import { useState } from 'react';
import { Button, Card, Group, NumberInput, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useCreateTier, useDeleteTier, useTiers, useUpdateTier } from '../../../hooks/api/programs';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { EditDialog } from '../common/edit-dialog';

export function TierList() {
  const { t } = useTranslation();
  const tiers = useTiers();
  const create = useCreateTier();
  const remove = useDeleteTier();
  const canWrite = useCan('programs:write');
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [threshold, setThreshold] = useState<number | string>(0);
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
                  <Table.Td>{tier.min_lifetime_points.toLocaleString()}</Table.Td>
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
            onSubmit={(event) => {
              event.preventDefault();
              create.mutate({ code, name, min_lifetime_points: Number(threshold) }, { onSuccess: () => { setCode(''); setName(''); setThreshold(0); } });
            }}
          >
            <Group align="flex-end" wrap="wrap">
              <TextInput label={t('tiers.code')} value={code} onChange={(e) => setCode(e.currentTarget.value)} required />
              <TextInput label={t('tiers.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required />
              <NumberInput label={t('tiers.threshold')} min={0} allowDecimal={false} value={threshold} onChange={setThreshold} required />
              <Button type="submit" loading={create.isPending}>
                {t('tiers.createSubmit')}
              </Button>
            </Group>
            <ErrorAlert error={create.error} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}

function TierEdit({ tier }: { tier: { code: string; name: string; min_lifetime_points: number } }) {
  const { t } = useTranslation();
  const update = useUpdateTier();
  const [name, setName] = useState(tier.name);
  const [threshold, setThreshold] = useState<number | string>(tier.min_lifetime_points);
  return (
    <EditDialog
      size="compact-sm"
      label={t('tiers.edit')}
      aria-label={t('tiers.editNamed', { name: tier.name })}
      title={t('tiers.editTitle', { name: tier.name })}
      submitLabel={t('tiers.save')}
      onOpen={() => {
        setName(tier.name);
        setThreshold(tier.min_lifetime_points);
      }}
      onSubmit={() => update.mutateAsync({ code: tier.code, body: { name, min_lifetime_points: Number(threshold) } })}
    >
      <TextInput label={t('tiers.name')} value={name} onChange={(e) => setName(e.currentTarget.value)} required data-autofocus />
      <NumberInput label={t('tiers.threshold')} min={0} allowDecimal={false} value={threshold} onChange={setThreshold} required />
    </EditDialog>
  );
}
