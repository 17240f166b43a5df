import { Badge, Button, Card, Group, NumberInput, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Activity } from '../../common/definition';
import { QuizEditor } from './quiz-editor';
import { SpinWheelEditor } from './spin-wheel-editor';

interface Props {
  activity: Activity;
  onChange: (activity: Activity) => void;
  onRemove: () => void;
  rewards: Array<{ value: string; label: string }>;
  unclaimableRewards: ReadonlySet<string>;
  disabled: boolean;
}

/** One activity: what every kind has (id, name, attempts), then its kind's own editor. */
export function ActivityCard({ activity, onChange, onRemove, rewards, unclaimableRewards, disabled }: Props) {
  const { t } = useTranslation();
  const name = activity.name || activity.id;
  return (
    <Card withBorder data-testid={`activity-${activity.id}`} component="section" aria-label={t('engagements.activityNamed', { name })}>
      <Stack gap="sm">
        <Group justify="space-between">
          <Badge variant="filled" color="indigo.9">
            {t(`engagements.kinds.${activity.type}`)}
          </Badge>
          {!disabled && (
            <Button variant="outline" color="red.9" size="compact-sm" onClick={onRemove}>
              {t('engagements.removeActivity', { name })}
            </Button>
          )}
        </Group>
        <SimpleGrid cols={{ base: 1, sm: 3 }}>
          <TextInput label={t('engagements.activityId')} value={activity.id} onChange={(e) => onChange({ ...activity, id: e.currentTarget.value })} disabled={disabled} />
          <TextInput label={t('engagements.activityName')} value={activity.name ?? ''} onChange={(e) => onChange({ ...activity, name: e.currentTarget.value || undefined })} disabled={disabled} />
          <NumberInput
            label={t('engagements.maxAttempts')}
            min={1}
            allowDecimal={false}
            value={activity.max_attempts ?? 1}
            onChange={(value) => onChange({ ...activity, max_attempts: Number(value) || 1 })}
            disabled={disabled}
          />
        </SimpleGrid>
        {activity.type === 'spin_wheel' ? (
          <SpinWheelEditor activity={activity} onChange={onChange} rewards={rewards} unclaimableRewards={unclaimableRewards} disabled={disabled} />
        ) : (
          <QuizEditor activity={activity} onChange={onChange} disabled={disabled} />
        )}
      </Stack>
    </Card>
  );
}
