import { ActionIcon, Button, Group, NumberInput, Select, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { ScrollTable } from '../../../../components/loading';
import { checkProbabilities, percent, PRIZE_TYPES, typed, withPrizeType, type Activity, type Segment } from '../../common/definition';
import { ProbabilityCheck } from './probability-check';
import { NO_PROBLEMS, type ProblemOf } from '../../common/problems';

const SEGMENTS_MAX = 24;
const SEGMENTS_MIN = 2;

interface Props {
  activity: Activity;
  onChange: (activity: Activity) => void;
  rewards: Array<{ value: string; label: string }>;
  unclaimableRewards: ReadonlySet<string>;
  disabled: boolean;
  problemOf?: ProblemOf;
}

/** A wheel's segments: label, weight with its share of the wheel (live), prize, inventory. */
export function SpinWheelEditor({ activity, onChange, rewards, unclaimableRewards, disabled, problemOf = NO_PROBLEMS }: Props) {
  const { t } = useTranslation();
  const segments = activity.segments ?? [];
  const check = checkProbabilities(segments, unclaimableRewards);
  const setSegment = (index: number, segment: Segment) => onChange({ ...activity, segments: segments.map((s, i) => (i === index ? segment : s)) });
  const name = activity.name ?? activity.id;
  return (
    <Stack gap="sm">
      <Title order={4} size="h5">
        {t('engagements.wheel.segments')}
      </Title>
      <ScrollTable minWidth={760}>
        <Table data-testid={`segments-${activity.id}`}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{t('engagements.wheel.label')}</Table.Th>
              <Table.Th>{t('engagements.wheel.weight')}</Table.Th>
              <Table.Th>{t('engagements.wheel.chance')}</Table.Th>
              <Table.Th>{t('engagements.wheel.prize')}</Table.Th>
              <Table.Th>{t('engagements.wheel.prizeValue')}</Table.Th>
              <Table.Th>{t('engagements.wheel.inventory')}</Table.Th>
              <Table.Th>
                <VisuallyHidden>{t('common.actions')}</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {segments.map((segment, index) => {
              const n = index + 1;
              const label = (key: string) => t(key, { n, name });
              return (
                <Table.Tr key={index}>
                  <Table.Td>
                    <TextInput
                      aria-label={label('engagements.wheel.labelOf')}
                      value={segment.label}
                      onChange={(e) => setSegment(index, { ...segment, label: e.currentTarget.value })}
                      error={problemOf(`/segments/${index}/label`)}
                      disabled={disabled}
                    />
                  </Table.Td>
                  <Table.Td>
                    <NumberInput
                      aria-label={label('engagements.wheel.weightOf')}
                      clampBehavior="none"
                      w={90}
                      value={Number.isNaN(segment.weight) ? '' : segment.weight}
                      onChange={(value) => setSegment(index, { ...segment, weight: typed(value) })}
                      error={problemOf(`/segments/${index}/weight`)}
                      disabled={disabled}
                    />
                  </Table.Td>
                  <Table.Td data-testid="segment-chance" aria-live="polite">
                    {percent(check.chances[index] ?? 0)}
                  </Table.Td>
                  <Table.Td>
                    <Select
                      aria-label={label('engagements.wheel.prizeOf')}
                      w={130}
                      data={PRIZE_TYPES.map((type) => ({ value: type, label: t(`engagements.wheel.prizeTypes.${type}`) }))}
                      value={segment.prize_type}
                      onChange={(value) => value && setSegment(index, withPrizeType(segment, value as Segment['prize_type']))}
                      allowDeselect={false}
                      disabled={disabled}
                    />
                  </Table.Td>
                  <Table.Td>
                    {segment.prize_type === 'points' && (
                      <NumberInput
                        aria-label={label('engagements.wheel.pointsOf')}
                        clampBehavior="none"
                        w={110}
                        allowDecimal={false}
                        value={segment.prize_value === undefined || Number.isNaN(segment.prize_value) ? '' : segment.prize_value}
                        onChange={(value) => setSegment(index, { ...segment, prize_value: typed(value) })}
                        error={problemOf(`/segments/${index}/prize_value`)}
                        disabled={disabled}
                      />
                    )}
                    {segment.prize_type === 'reward' && (
                      <Select
                        aria-label={label('engagements.wheel.rewardOf')}
                        w={180}
                        data={rewards}
                        value={segment.reward_id || null}
                        onChange={(value) => setSegment(index, { ...segment, reward_id: value ?? '' })}
                        error={problemOf(`/segments/${index}/reward_id`)}
                        searchable
                        disabled={disabled}
                      />
                    )}
                    {segment.prize_type === 'badge' && (
                      <TextInput aria-label={label('engagements.wheel.badgeOf')} w={150} value={segment.badge_code ?? ''} onChange={(e) => setSegment(index, { ...segment, badge_code: e.currentTarget.value })} disabled={disabled} />
                    )}
                    {segment.prize_type === 'none' && <Text c="dimmed">—</Text>}
                  </Table.Td>
                  <Table.Td>
                    <NumberInput
                      aria-label={label('engagements.wheel.inventoryOf')}
                      placeholder={t('engagements.wheel.unlimited')}
                      clampBehavior="none"
                      w={110}
                      allowDecimal={false}
                      error={problemOf(`/segments/${index}/inventory`)}
                      value={segment.inventory ?? ''}
                      onChange={(value) => {
                        const { inventory: _old, ...rest } = segment;
                        setSegment(index, value === '' ? rest : { ...rest, inventory: Number(value) });
                      }}
                      disabled={disabled}
                    />
                  </Table.Td>
                  <Table.Td>
                    {!disabled && (
                      <ActionIcon
                        variant="outline"
                        color="red.9"
                        aria-label={label('engagements.wheel.removeSegment')}
                        disabled={segments.length <= SEGMENTS_MIN}
                        onClick={() => onChange({ ...activity, segments: segments.filter((_s, i) => i !== index) })}
                      >
                        ×
                      </ActionIcon>
                    )}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </ScrollTable>
      {!disabled && (
        <Group>
          <Button
            variant="default"
            size="compact-sm"
            disabled={segments.length >= SEGMENTS_MAX}
            onClick={() => onChange({ ...activity, segments: [...segments, { label: t('engagements.wheel.newSegment', { n: segments.length + 1 }), prize_type: 'none', weight: 1 }] })}
          >
            {t('engagements.wheel.addSegment')}
          </Button>
        </Group>
      )}
      <ProbabilityCheck check={check} segments={segments} />
    </Stack>
  );
}
