import { Button, Card, Group, Select, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useFieldArray, useWatch } from 'react-hook-form';
import { useSaveChallenge, type Challenge, type ChallengeInput } from '../../../hooks/api/challenges';
import { useCan } from '../../../components/permission';
import { FormErrors, fieldErrorWords, useApiForm, type ApiForm } from '../../../lib/forms';
import { useFormat, ZoneNote, type Format } from '../../../lib/format';
import { defaultWindow } from '../common/schedule';
import { BadgePicker, EventNamePicker } from '../common/pickers';

type Evaluator = ChallengeInput['objectives'][number]['evaluator'];
const EVALUATORS: Evaluator[] = ['event_count', 'activity_count', 'points_earned', 'badge_earned'];

interface ObjectiveValues {
  /** The stored objective's id (kept so progress stays with it); `id` itself is the field array's key. */
  objective_id?: string;
  name: string;
  evaluator: Evaluator;
  target: number | undefined;
  event_name: string;
  badge_code: string;
}
interface MilestoneValues {
  name: string;
  /** Percent of the overall progress (the API takes a fraction). */
  percent: number | undefined;
}
export interface ChallengeValues {
  name: string;
  description: string;
  /** `datetime-local` values in the tenant's zone. */
  starts_at: string;
  ends_at: string;
  objectives: ObjectiveValues[];
  milestones: MilestoneValues[];
  completion_points: number | undefined;
  completion_badge_code: string;
}

/** Which fields the server lets change in each status; the form sends only those. */
const EDITABLE: Record<Challenge['status'], ReadonlyArray<keyof ChallengeInput> | 'all'> = {
  draft: 'all',
  scheduled: 'all',
  active: ['name', 'description', 'ends_at'],
  ended: ['name', 'description'],
  archived: ['name', 'description'],
};

const NEW_OBJECTIVE: ObjectiveValues = { name: '', evaluator: 'event_count', target: 1, event_name: '', badge_code: '' };

function valuesOf(c: Challenge | undefined, f: Format): ChallengeValues {
  if (!c) {
    const window = defaultWindow(1, 14);
    return {
      name: '',
      description: '',
      starts_at: f.toZonedInput(window.starts_at),
      ends_at: f.toZonedInput(window.ends_at),
      objectives: [NEW_OBJECTIVE],
      milestones: [],
      completion_points: undefined,
      completion_badge_code: '',
    };
  }
  return {
    name: c.name,
    description: c.description,
    starts_at: f.toZonedInput(c.starts_at),
    ends_at: f.toZonedInput(c.ends_at),
    objectives: c.objectives.map((o) => ({ objective_id: o.id, name: o.name, evaluator: o.evaluator as Evaluator, target: o.target, event_name: o.event_name ?? '', badge_code: o.badge_code ?? '' })),
    milestones: c.milestones.map((m) => ({ name: m.name, percent: Math.round(m.threshold * 100) })),
    completion_points: c.completion_points ?? undefined,
    completion_badge_code: c.completion_badge_code ?? '',
  };
}

function toInput(values: ChallengeValues, existing: Challenge | undefined, f: Format): ChallengeInput {
  const full: ChallengeInput = {
    name: values.name.trim(),
    description: values.description,
    starts_at: f.fromZonedInput(values.starts_at),
    ends_at: f.fromZonedInput(values.ends_at),
    objectives: values.objectives.map((o) => ({
      ...(o.objective_id ? { id: o.objective_id } : {}),
      name: o.name.trim(),
      evaluator: o.evaluator,
      target: o.target as number,
      ...(o.evaluator === 'event_count' && o.event_name.trim() ? { event_name: o.event_name.trim() } : {}),
      ...(o.evaluator === 'badge_earned' && o.badge_code ? { badge_code: o.badge_code } : {}),
    })),
    milestones: values.milestones.map((m) => ({ name: m.name.trim(), threshold: (m.percent as number) / 100 })),
    completion_points: values.completion_points ?? null,
    completion_badge_code: values.completion_badge_code || null,
  };
  const editable = existing ? EDITABLE[existing.status] : 'all';
  if (editable === 'all') return full;
  return Object.fromEntries(editable.map((key) => [key, full[key]])) as ChallengeInput;
}

/** A milestone is a percent of the progress here and a fraction in the API: its bound is checked in percent, its refusal still lands on it. */
function percentField(form: ApiForm<ChallengeValues>, index: number) {
  const name = `milestones.${index}.percent` as const;
  const wired = form.field(name, { number: true, required: true, pointer: `/milestones/${index}/threshold` });
  const registered = form.register(name, {
    required: fieldErrorWords({ code: 'required', message: 'required' }),
    setValueAs: (value: unknown) => (value === '' || value === null || value === undefined ? undefined : Number(value)),
    validate: (value: unknown) => {
      if (value === undefined) return true;
      if (typeof value !== 'number' || Number.isNaN(value)) return fieldErrorWords({ code: 'type_number', message: 'not a number' });
      if (value <= 0) return fieldErrorWords({ code: 'exclusive_minimum', message: 'too small', limit: 0 });
      if (value > 100) return fieldErrorWords({ code: 'maximum', message: 'too large', limit: 100 });
      return true;
    },
  });
  return { ...wired, ...registered };
}

/** The challenge's definition: times in the tenant's zone, limits from the service's schema, refusals on their fields. */
export function ChallengeForm({ existing, onSaved }: { existing: Challenge | undefined; onSaved: (saved: Challenge) => void }) {
  const { t } = useTranslation();
  const f = useFormat();
  const save = useSaveChallenge(existing?.id);
  const canWrite = useCan('programs:write');
  const operation = existing ? 'updateChallenge' : 'createChallenge';
  const form = useApiForm<ChallengeValues>(operation, { defaultValues: valuesOf(existing, f) });
  const objectives = useFieldArray({ control: form.control, name: 'objectives' });
  const milestones = useFieldArray({ control: form.control, name: 'milestones' });
  const evaluators = useWatch({ control: form.control, name: 'objectives' });
  const editable = existing ? EDITABLE[existing.status] : 'all';
  const locked = (field: keyof ChallengeInput) => !canWrite || (editable !== 'all' && !editable.includes(field));

  const onSubmit = form.submit(async (values) => {
    const saved = await save.mutateAsync(toInput(values, existing, f));
    onSaved(saved);
  });

  return (
    <form onSubmit={onSubmit} noValidate>
      <Stack>
        <Card withBorder>
          <Stack>
            <TextInput label={t('challenges.name')} {...form.field('name')} disabled={locked('name')} />
            <Textarea label={t('challenges.description')} {...form.field('description')} disabled={locked('description')} />
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput type="datetime-local" label={t('competitions.startsAt')} {...form.field('starts_at')} disabled={locked('starts_at')} />
              <TextInput type="datetime-local" label={t('competitions.endsAt')} {...form.field('ends_at')} disabled={locked('ends_at')} />
            </SimpleGrid>
            <ZoneNote />
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('challenges.objectives')}
          </Title>
          <Stack>
            {objectives.fields.map((objective, index) => {
              const evaluator = evaluators?.[index]?.evaluator ?? objective.evaluator;
              return (
                <Group key={objective.id} align="flex-start" wrap="wrap" data-testid="objective">
                  <TextInput label={t('challenges.objectiveName', { n: index + 1 })} {...form.field(`objectives.${index}.name`)} disabled={locked('objectives')} />
                  <Controller
                    control={form.control}
                    name={`objectives.${index}.evaluator`}
                    render={({ field }) => (
                      <Select
                        ref={field.ref}
                        label={t('challenges.evaluator')}
                        data={EVALUATORS.map((value) => ({ value, label: t(`challenges.evaluators.${value}`) }))}
                        value={field.value}
                        onChange={(value) => value && field.onChange(value)}
                        allowDeselect={false}
                        disabled={locked('objectives')}
                      />
                    )}
                  />
                  <TextInput label={t('challenges.target')} {...form.field(`objectives.${index}.target`, { number: true })} disabled={locked('objectives')} />
                  {evaluator === 'event_count' && (
                    <EventNamePicker form={form} operation={operation} name={`objectives.${index}.event_name`} label={t('challenges.eventName')} required disabled={locked('objectives')} />
                  )}
                  {evaluator === 'badge_earned' && (
                    <BadgePicker form={form} operation={operation} name={`objectives.${index}.badge_code`} label={t('challenges.badgeCode')} disabled={locked('objectives')} />
                  )}
                  {objectives.fields.length > 1 && !locked('objectives') && (
                    <Button variant="outline" color="red.9" mt={24} onClick={() => objectives.remove(index)}>
                      {t('challenges.removeObjective', { n: index + 1 })}
                    </Button>
                  )}
                </Group>
              );
            })}
            {!locked('objectives') && (
              <Button variant="default" onClick={() => objectives.append({ ...NEW_OBJECTIVE })}>
                {t('challenges.addObjective')}
              </Button>
            )}
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('challenges.milestones')}
          </Title>
          <Stack>
            {milestones.fields.length === 0 && <Text c="dimmed">{t('challenges.noMilestones')}</Text>}
            {milestones.fields.map((milestone, index) => (
              <Group key={milestone.id} align="flex-start" wrap="wrap">
                <TextInput label={t('challenges.milestoneName', { n: index + 1 })} {...form.field(`milestones.${index}.name`)} disabled={locked('milestones')} />
                <TextInput label={t('challenges.milestonePercent')} {...percentField(form, index)} description={t('challenges.percentHint')} disabled={locked('milestones')} />
                {!locked('milestones') && (
                  <Button variant="outline" color="red.9" mt={24} onClick={() => milestones.remove(index)}>
                    {t('challenges.removeMilestone', { n: index + 1 })}
                  </Button>
                )}
              </Group>
            ))}
            {!locked('milestones') && (
              <Button variant="default" onClick={() => milestones.append({ name: '', percent: 50 })}>
                {t('challenges.addMilestone')}
              </Button>
            )}
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('challenges.completion')}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput label={t('challenges.completionPoints')} {...form.field('completion_points', { number: true })} disabled={locked('completion_points')} />
            <BadgePicker form={form} operation={operation} name="completion_badge_code" label={t('challenges.completionBadge')} disabled={locked('completion_badge_code')} />
          </SimpleGrid>
        </Card>
        <FormErrors form={form} />
        {canWrite && existing?.status !== 'archived' && (
          <Group>
            <Button type="submit" loading={form.formState.isSubmitting}>
              {existing ? t('challenges.save') : t('challenges.create')}
            </Button>
            {save.isSuccess && existing && !form.refusal && <Text role="status">{t('challenges.saved')}</Text>}
          </Group>
        )}
      </Stack>
    </form>
  );
}
