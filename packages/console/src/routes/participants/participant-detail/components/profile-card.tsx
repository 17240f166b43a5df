import { useState } from 'react';
import { Button, Card, Code, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { ResponseBody } from '@loyalty/sdk';
import { useRevealField } from '../../../../hooks/api/participants';
import { RoleGuard } from '../../../../components/permission';
import { ErrorAlert } from '../../../../components/error-alert';

const PERSONAL_FIELDS = ['email', 'display_name', 'first_name', 'last_name', 'full_name', 'mobile_number', 'date_of_birth', 'gender', 'city', 'postal_code', 'country_code', 'external_id'] as const;
type Profile = ResponseBody<'getParticipantProfile'>;

/** The masked profile; a field is shown in clear only after a reason is given (recorded in the audit log), and only in this dialog. */
function RevealButton({ participantId, field }: { participantId: string; field: string }) {
  const { t } = useTranslation();
  const reveal = useRevealField(participantId);
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const close = () => {
    setOpen(false);
    setReason('');
    reveal.reset();
  };
  return (
    <>
      <Button size="compact-xs" variant="default" onClick={() => setOpen(true)} aria-label={t('reveal.buttonFor', { field: t(`fields.${field}`) })}>
        {t('reveal.button')}
      </Button>
      <Modal opened={open} onClose={close} title={t('reveal.title', { field: t(`fields.${field}`) })} centered closeButtonProps={{ 'aria-label': t('common.close') }}>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            reveal.mutate({ field, reason: reason.trim() });
          }}
        >
          <Stack>
            <Text size="sm">{t('reveal.explain')}</Text>
            {reveal.data ? (
              <Code block data-testid="revealed-value">
                {reveal.data.value === null ? '—' : String(reveal.data.value)}
              </Code>
            ) : (
              <>
                <TextInput label={t('reveal.reason')} value={reason} onChange={(e) => setReason(e.currentTarget.value)} required minLength={3} maxLength={500} data-autofocus />
                <ErrorAlert error={reveal.error} />
                <Button type="submit" loading={reveal.isPending} disabled={reason.trim().length < 3}>
                  {t('reveal.submit')}
                </Button>
              </>
            )}
          </Stack>
        </form>
      </Modal>
    </>
  );
}

export function ProfileCard({ profile }: { profile: Profile }) {
  const { t } = useTranslation();
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        {profile.masked ? t('participant.profileMasked') : t('participant.profile')}
      </Title>
      <Table>
        <Table.Tbody>
          {PERSONAL_FIELDS.map((field) => {
            const value = profile[field];
            return (
              <Table.Tr key={field}>
                <Table.Th scope="row" w="40%">
                  {t(`fields.${field}`)}
                </Table.Th>
                <Table.Td>{value ?? '—'}</Table.Td>
                <Table.Td ta="right">
                  {value !== null && profile.masked && (
                    <RoleGuard permission="pii:reveal">
                      <RevealButton participantId={profile.participant_id} field={field} />
                    </RoleGuard>
                  )}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
