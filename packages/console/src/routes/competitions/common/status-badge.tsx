import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** Shade-9 colours keep the white badge text at AA contrast. */
const COLOURS: Record<string, string> = {
  draft: 'gray.7',
  scheduled: 'blue.9',
  active: 'teal.9',
  scoring: 'cyan.9',
  completed: 'indigo.9',
  ended: 'indigo.9',
  archived: 'gray.7',
  pending: 'violet.9',
  pending_review: 'violet.9',
  approved: 'teal.9',
  converted: 'teal.9',
  rejected: 'red.9',
  disqualified: 'red.9',
};

/** A status in the console's words (`competitions.status.<status>`), coloured by what it means; a narrow table column never cuts it short. */
export function StatusBadge({ status }: { status: string }) {
  const { t } = useTranslation();
  return (
    <Badge color={COLOURS[status] ?? 'gray.7'} variant="filled" miw="max-content">
      {t(`competitions.status.${status}`, { defaultValue: status })}
    </Badge>
  );
}
