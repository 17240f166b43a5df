import { useState } from 'react';
import { Alert, Button, Card, Group, Image, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useAwardBadge, useBadges, useCreateBadge, useDeleteBadge, useUpdateBadge } from '../../../hooks/api/programs';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Pager, useCursorPages } from '../../../components/pager';
import { ConfirmButton } from '../../../components/confirm-button';
import { RoleGuard, useCan } from '../../../components/permission';
import { Loading, ScrollTable } from '../../../components/loading';
import { EditDialog } from '../common/edit-dialog';
import { FormErrors, useApiForm } from '../../../lib/forms';

interface BadgeValues {
  code: string;
  name: string;
  description: string;
  image_url: string;
}

interface Badge {
  code: string;
  name: string;
  description: string | null;
  image_url: string | null;
}

export function BadgeList() {
  const { t } = useTranslation();
  const pages = useCursorPages();
  const badges = useBadges(pages.cursor);
  const create = useCreateBadge();
  const canWrite = useCan('programs:write');
  const canAward = useCan('participants:write');
  const form = useApiForm<BadgeValues>('createBadge', { defaultValues: { code: '', name: '', description: '', image_url: '' } });
  const [notice, setNotice] = useState<string | null>(null);
  const rows = (badges.data?.badges ?? []) as Badge[];
  return (
    <Stack>
      <PageHeader title={t('badges.title')} />
      <ErrorAlert error={badges.error} />
      {notice && (
        <Alert color="teal" role="status" withCloseButton closeButtonLabel={t('common.close')} onClose={() => setNotice(null)}>
          {notice}
        </Alert>
      )}
      {badges.isPending && <Loading />}
      {badges.data && rows.length === 0 && <Text>{t('badges.none')}</Text>}
      {rows.length > 0 && (
        <ScrollTable minWidth={700}>
          <Table striped data-testid="badges">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{t('badges.image')}</Table.Th>
                <Table.Th>{t('badges.code')}</Table.Th>
                <Table.Th>{t('badges.name')}</Table.Th>
                <Table.Th>{t('badges.description')}</Table.Th>
                {(canWrite || canAward) && <Table.Th>{t('common.actions')}</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((badge) => (
                <Table.Tr key={badge.code}>
                  <Table.Td>{badge.image_url ? <BadgeImage url={badge.image_url} /> : '—'}</Table.Td>
                  <Table.Td>{badge.code}</Table.Td>
                  <Table.Td>{badge.name}</Table.Td>
                  <Table.Td>{badge.description ?? '—'}</Table.Td>
                  {(canWrite || canAward) && (
                    <Table.Td>
                      <Group gap="xs" wrap="nowrap">
                        {canWrite && <BadgeEdit badge={badge} />}
                        {canAward && <BadgeAward badge={badge} onAwarded={setNotice} />}
                        {canWrite && <BadgeDelete badge={badge} />}
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollTable>
      )}
      <Pager pages={pages} nextCursor={badges.data?.next_cursor} />
      <RoleGuard permission="programs:write">
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('badges.create')}
          </Title>
          <form
            noValidate
            onSubmit={form.submit(async (values) => {
              await create.mutateAsync({ code: values.code, name: values.name, description: values.description || undefined, image_url: values.image_url || undefined });
              form.reset();
            })}
          >
            <Group align="flex-start" wrap="wrap">
              <TextInput label={t('badges.code')} {...form.field('code')} />
              <TextInput label={t('badges.name')} {...form.field('name')} />
              <TextInput label={t('badges.description')} {...form.field('description')} />
              <TextInput label={t('badges.imageUrl')} type="url" {...form.field('image_url')} />
              <Button type="submit" mt={24} loading={form.formState.isSubmitting}>
                {t('badges.createSubmit')}
              </Button>
            </Group>
            <FormErrors form={form} />
          </form>
        </Card>
      </RoleGuard>
    </Stack>
  );
}

/** The badge's picture; when its address does not load, a note says so instead of a broken image. */
function BadgeImage({ url }: { url: string }) {
  const { t } = useTranslation();
  const [failed, setFailed] = useState(false);
  if (failed) {
    return (
      <Text size="xs" c="dimmed" title={url}>
        {t('badges.imageMissing')}
      </Text>
    );
  }
  return <Image src={url} alt="" w={32} h={32} fit="contain" onError={() => setFailed(true)} />;
}

function BadgeEdit({ badge }: { badge: Badge }) {
  const { t } = useTranslation();
  const update = useUpdateBadge();
  const form = useApiForm<Omit<BadgeValues, 'code'>>('updateBadge');
  return (
    <EditDialog
      size="compact-sm"
      label={t('badges.edit')}
      aria-label={t('badges.editNamed', { name: badge.name })}
      title={t('badges.editTitle', { name: badge.name })}
      submitLabel={t('badges.save')}
      form={form}
      values={() => ({ name: badge.name, description: badge.description ?? '', image_url: badge.image_url ?? '' })}
      onSubmit={(values) => update.mutateAsync({ code: badge.code, body: { name: values.name, description: values.description || null, image_url: values.image_url || null } })}
    >
      <TextInput label={t('badges.name')} {...form.field('name', { required: true })} data-autofocus />
      <TextInput label={t('badges.description')} {...form.field('description')} />
      <TextInput label={t('badges.imageUrl')} type="url" {...form.field('image_url')} />
    </EditDialog>
  );
}

function BadgeAward({ badge, onAwarded }: { badge: Badge; onAwarded: (notice: string) => void }) {
  const { t } = useTranslation();
  const award = useAwardBadge();
  const [participantId, setParticipantId] = useState('');
  return (
    <ConfirmButton
      size="compact-sm"
      variant="outline"
      destructive={false}
      label={t('badges.award')}
      aria-label={t('badges.awardNamed', { name: badge.name })}
      title={t('badges.awardTitle', { name: badge.name })}
      message={t('badges.awardMessage')}
      confirmLabel={t('badges.award')}
      confirmDisabled={participantId.trim() === ''}
      onConfirm={async () => {
        const result = await award.mutateAsync({ code: badge.code, participant_id: participantId.trim() });
        onAwarded(t(result.awarded ? 'badges.awarded' : 'badges.alreadyHeld', { participant: result.participant_id }));
        setParticipantId('');
      }}
    >
      <TextInput label={t('badges.participantId')} value={participantId} onChange={(e) => setParticipantId(e.currentTarget.value)} required data-autofocus />
    </ConfirmButton>
  );
}

function BadgeDelete({ badge }: { badge: Badge }) {
  const { t } = useTranslation();
  const remove = useDeleteBadge();
  return (
    <ConfirmButton
      size="compact-sm"
      variant="outline"
      label={t('common.delete')}
      aria-label={t('badges.deleteNamed', { name: badge.name })}
      title={t('badges.deleteTitle')}
      message={t('badges.deleteConfirm', { name: badge.name })}
      confirmLabel={t('common.delete')}
      onConfirm={() => remove.mutateAsync(badge.code)}
    />
  );
}
