import { Badge } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { EventStatus } from '../../../hooks/api/events';

export const EVENT_STATUSES: EventStatus[] = ['pending', 'processed', 'retrying', 'failed'];
// Shade 9 keeps white text on the badges above 4.5:1.
const COLORS: Record<EventStatus, string> = { pending: 'blue.9', processed: 'teal.9', retrying: 'orange.9', failed: 'red.9' };

export function EventStatusBadge({ status }: { status: EventStatus }) {
  const { t } = useTranslation();
  return (
    // Never narrower than its word: a crowded table cut "failed" to "FAIL…".
    <Badge color={COLORS[status]} variant="filled" miw="max-content">
      {t(`events.statuses.${status}`)}
    </Badge>
  );
}
