import { Card, Group, Loader, Stack, Table, Text, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useTranslation } from 'react-i18next';
import { useSegmentPreview, type SegmentFilter } from '../../../../hooks/api/segments';
import { ErrorAlert } from '../../../../components/error-alert';
import { useFormat } from '../../../../lib/format';
import { MemberRows } from '../../common/member-rows';

/**
 * The size of the filter being edited and a masked sample of its members,
 * asked again 400 ms after the last change (only the conditions that are
 * complete are sent), with the time the service took to count.
 */
export function LiveSize({ filter }: { filter: SegmentFilter }) {
  const { t } = useTranslation();
  const f = useFormat();
  const [debounced] = useDebouncedValue(JSON.stringify(filter), 400);
  const preview = useSegmentPreview(JSON.parse(debounced) as SegmentFilter);
  const data = preview.data;
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group justify="space-between">
          <Title order={2} size="h4">
            {t('segments.liveSize')}
          </Title>
          {preview.isFetching && <Loader size="xs" role="status" aria-label={t('common.loading')} />}
        </Group>
        <div aria-live="polite" aria-atomic="true">
          {data && (
            <>
              <Text size="xl" fw={700} data-testid="segment-size">
                {t('segments.sizeValue', { count: data.size, size: f.number(data.size) })}
              </Text>
              <Text size="xs" c="dimmed" data-testid="segment-took">
                {t('segments.took', { ms: f.number(data.took_ms) })}
              </Text>
            </>
          )}
        </div>
        <ErrorAlert error={preview.error} />
        <Text size="sm" c="dimmed">
          {t('segments.sampleHelp')}
        </Text>
        {data && data.sample.length > 0 && (
          <Table data-testid="segment-sample" fz="sm" aria-label={t('segments.sample')}>
            <MemberRows members={data.sample} compact />
          </Table>
        )}
      </Stack>
    </Card>
  );
}
