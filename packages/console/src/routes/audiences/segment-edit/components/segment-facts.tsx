import { Anchor, Badge, Button, Card, Group, List, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';
import { useRefreshSegment, type Segment } from '../../../../hooks/api/segments';
import { ErrorAlert } from '../../../../components/error-alert';
import { useCan } from '../../../../components/permission';
import { useFormat } from '../../../../lib/format';
import { usedByKind, usedByLink } from '../../common/used-by';

/** A saved segment at a glance: kept up to date or not, its size at the last refresh (with a refresh for those kept), and what uses it. */
export function SegmentFacts({ segment }: { segment: Segment }) {
  const { t } = useTranslation();
  const f = useFormat();
  const refresh = useRefreshSegment(segment.id);
  const canWrite = useCan('programs:write');
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group gap="sm">
          <Badge color={segment.materialized ? 'teal.9' : 'gray.7'} variant="filled">
            {segment.materialized ? t('segments.kept') : t('segments.evaluated')}
          </Badge>
          {segment.materialized && (
            <Text size="sm" data-testid="segment-refreshed">
              {segment.refreshed_at
                ? t('segments.sizeAsOf', { count: segment.size ?? 0, size: f.number(segment.size ?? 0), at: f.dateTime(segment.refreshed_at) })
                : t('segments.neverRefreshed')}
            </Text>
          )}
          {segment.materialized && canWrite && (
            <Button size="xs" variant="default" loading={refresh.isPending} onClick={() => refresh.mutate()}>
              {t('segments.refresh')}
            </Button>
          )}
        </Group>
        {refresh.data && (
          <Text size="sm" role="status">
            {t('segments.refreshed', { count: refresh.data.size, entered: f.number(refresh.data.entered), left: f.number(refresh.data.left), size: f.number(refresh.data.size) })}
          </Text>
        )}
        <ErrorAlert error={refresh.error} />
        <Text size="sm" fw={600}>
          {t('segments.usedBy')}
        </Text>
        {segment.used_by.length === 0 ? (
          <Text size="sm">{t('segments.unused')}</Text>
        ) : (
          <List size="sm">
            {segment.used_by.map((use) => (
              <List.Item key={`${use.type}:${use.id}`}>
                {t(`segments.usedByTypes.${usedByKind(use)}`, { defaultValue: use.type })}:{' '}
                <Anchor component={Link} to={usedByLink(use)}>
                  {use.name ?? use.id}
                </Anchor>
              </List.Item>
            ))}
          </List>
        )}
      </Stack>
    </Card>
  );
}
