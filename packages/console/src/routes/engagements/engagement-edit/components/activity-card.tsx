import { Badge, Button, Card, Group, NumberInput, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { typed, type Activity } from '../../common/definition';
import { engagementHint, NO_PROBLEMS, type ProblemOf } from '../../common/problems';
import { QuizEditor } from './quiz-editor';
import { SpinWheelEditor } from './spin-wheel-editor';

interface Props {
  activity: Activity;
  onChange: (activity: Activity) => void;
  onRemove: () => void;
  rewards: Array<{ value: string; label: string }>;
  unclaimableRewards: ReadonlySet<string>;
  disabled: boolean;
  /** The service's refusal of a field of this activity, by its pointer within it (`/segments/1/weight`). */
  problemOf?: ProblemOf;
}

/** One activity: what every kind has (id, name, attempts), then its kind's own editor. */
export function ActivityCard({ activity, onChange, onRemove, rewards, unclaimableRewards, disabled, problemOf = NO_PROBLEMS }: Props) {
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
          <TextInput
            label={t('engagements.activityId')}
            value={activity.id}
            onChange={(e) => onChange({ ...activity, id: e.currentTarget.value })}
            error={problemOf('/id')}
            disabled={disabled}
          />
          <TextInput
            label={t('engagements.activityName')}
            value={activity.name ?? ''}
            onChange={(e) => onChange({ ...activity, name: e.currentTarget.value || undefined })}
            error={problemOf('/name')}
            disabled={disabled}
          />
          {/* Never clamped: a value out of range is sent as typed and refused on this field with the limit named. */}
          <NumberInput
            label={t('engagements.maxAttempts')}
            description={engagementHint('activities.0.max_attempts')}
            clampBehavior="none"
            allowDecimal={false}
            value={activity.max_attempts === undefined || Number.isNaN(activity.max_attempts) ? '' : activity.max_attempts}
            onChange={(value) => onChange({ ...activity, max_attempts: typed(value) })}
            error={problemOf('/max_attempts')}
            disabled={disabled}
          />
        </SimpleGrid>
        {activity.type === 'spin_wheel' ? (
          <SpinWheelEditor activity={activity} onChange={onChange} rewards={rewards} unclaimableRewards={unclaimableRewards} disabled={disabled} problemOf={problemOf} />
        ) : (
          <QuizEditor activity={activity} onChange={onChange} disabled={disabled} problemOf={problemOf} />
        )}
      </Stack>
    </Card>
  );
}

