import { Button, Card, Checkbox, Group, Select, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Controller, useFieldArray, useWatch } from 'react-hook-form';
import { useSaveContest, type Contest, type ContestInput } from '../../../hooks/api/contests';
import { FormErrors, useApiForm } from '../../../lib/forms';
import { useFormat, ZoneNote, type Format } from '../../../lib/format';
import { defaultWindow } from '../common/schedule';
import { EventNamePicker } from '../common/pickers';

type Prize = ContestInput['prize_structure'][number];
type RewardType = Prize['reward']['type'];
const REWARD_TYPES: RewardType[] = ['voucher', 'coupon', 'cash', 'points_multiplier', 'physical', 'digital'];
const NUMBER_RULES = ['max_score_per_minute', 'max_score_per_hour', 'max_rank_jump_per_hour', 'review_threshold_score'] as const;
const SWITCH_RULES = ['block_disposable_emails', 'block_repeat_payment_methods', 'block_repeat_devices', 'auto_disqualify_on_velocity_breach'] as const;

interface PrizeValues {
  rank_from: number | undefined;
  rank_to: number | undefined;
  label: string;
  reward: { type: RewardType; value: number | undefined; name: string };
}
/** The body's own shape, so that each field's name is the pointer a refusal names (`prize_structure.1.rank_from`). */
export interface ContestValues {
  id: string;
  title: string;
  description: string;
  /** `datetime-local` values in the tenant's zone. */
  starts_at: string;
  ends_at: string;
  scoring: { event_type: string; score_attribute: string; weight: number | undefined };
  prize_structure: PrizeValues[];
  max_reward_liability: number | undefined;
  verification_window_hours: number | undefined;
  fraud_rules: Record<(typeof NUMBER_RULES)[number], number | undefined> & Record<(typeof SWITCH_RULES)[number], boolean>;
}

/** What the server lets change in each status (scoring and prizes freeze at publication; once running, only the words). */
const EDITABLE: Record<Contest['status'], ReadonlyArray<keyof ContestInput> | 'all'> = {
  draft: 'all',
  scheduled: ['title', 'description', 'starts_at', 'ends_at', 'max_reward_liability', 'fraud_rules', 'verification_window_hours'],
  active: ['title', 'description'],
  scoring: ['title', 'description'],
  completed: ['title', 'description'],
};

function valuesOf(c: Contest | undefined, f: Format): ContestValues {
  if (!c) {
    const window = defaultWindow(1, 7);
    return {
      id: '',
      title: '',
      description: '',
      starts_at: f.toZonedInput(window.starts_at),
      ends_at: f.toZonedInput(window.ends_at),
      scoring: { event_type: '', score_attribute: 'score', weight: 1 },
      prize_structure: [{ rank_from: 1, rank_to: 1, label: '', reward: { type: 'voucher', value: 50, name: '' } }],
      max_reward_liability: 1000,
      verification_window_hours: 24,
      fraud_rules: {
        max_score_per_minute: undefined,
        max_score_per_hour: undefined,
        max_rank_jump_per_hour: undefined,
        review_threshold_score: undefined,
        block_disposable_emails: false,
        block_repeat_payment_methods: false,
        block_repeat_devices: false,
        auto_disqualify_on_velocity_breach: false,
      },
    };
  }
  const rules = c.fraud_rules as Record<string, number | boolean | undefined>;
  return {
    id: c.id,
    title: c.title,
    description: c.description ?? '',
    starts_at: f.toZonedInput(c.starts_at),
    ends_at: f.toZonedInput(c.ends_at),
    scoring: { ...c.scoring },
    prize_structure: c.prize_structure.map((p) => ({ rank_from: p.rank_from, rank_to: p.rank_to, label: p.label ?? '', reward: { type: p.reward.type, value: p.reward.value, name: p.reward.name ?? '' } })),
    max_reward_liability: c.max_reward_liability,
    verification_window_hours: c.verification_window_hours,
    fraud_rules: {
      ...(Object.fromEntries(NUMBER_RULES.map((k) => [k, typeof rules[k] === 'number' ? rules[k] : undefined])) as Record<(typeof NUMBER_RULES)[number], number | undefined>),
      ...(Object.fromEntries(SWITCH_RULES.map((k) => [k, rules[k] === true])) as Record<(typeof SWITCH_RULES)[number], boolean>),
    },
  };
}

function toInput(values: ContestValues, existing: Contest | undefined, f: Format): ContestInput {
  const fraud_rules: Record<string, number | boolean> = {};
  for (const key of NUMBER_RULES) if (values.fraud_rules[key] !== undefined) fraud_rules[key] = values.fraud_rules[key] as number;
  for (const key of SWITCH_RULES) fraud_rules[key] = values.fraud_rules[key];
  const full: ContestInput = {
    id: values.id.trim(),
    title: values.title.trim(),
    description: values.description,
    starts_at: f.fromZonedInput(values.starts_at),
    ends_at: f.fromZonedInput(values.ends_at),
    scoring: { event_type: values.scoring.event_type.trim(), score_attribute: values.scoring.score_attribute.trim(), weight: values.scoring.weight as number },
    prize_structure: values.prize_structure.map((p) => ({
      rank_from: p.rank_from as number,
      rank_to: p.rank_to as number,
      ...(p.label.trim() ? { label: p.label.trim() } : {}),
      reward: { type: p.reward.type, value: p.reward.value as number, ...(p.reward.name.trim() ? { name: p.reward.name.trim() } : {}) },
    })),
    max_reward_liability: values.max_reward_liability as number,
    fraud_rules: fraud_rules as ContestInput['fraud_rules'],
    verification_window_hours: values.verification_window_hours,
  };
  const editable = existing ? EDITABLE[existing.status] : 'all';
  if (editable === 'all') return full;
  return { id: full.id, ...Object.fromEntries(editable.map((key) => [key, full[key]])) } as ContestInput;
}

/** A field's limits (from the schema) and what it means, in one description. */
function withHelp(props: Record<string, unknown>, help: string): Record<string, unknown> {
  return { ...props, description: [props.description, help].filter(Boolean).join(' · ') };
}

/** A contest's definition: times in the tenant's zone, limits from the service's schema, refusals on their fields. */
export function ContestForm({ existing, onSaved }: { existing: Contest | undefined; onSaved: (saved: Contest) => void }) {
  const { t } = useTranslation();
  const f = useFormat();
  const save = useSaveContest(existing?.id);
  const operation = existing ? 'updateContest' : 'createContest';
  const form = useApiForm<ContestValues>(operation, { defaultValues: valuesOf(existing, f) });
  const prizes = useFieldArray({ control: form.control, name: 'prize_structure' });
  const lastRank = useWatch({ control: form.control, name: 'prize_structure' })?.at(-1)?.rank_to;
  const editable = existing ? EDITABLE[existing.status] : 'all';
  const locked = (field: keyof ContestInput) => editable !== 'all' && !editable.includes(field);
  // The id is the path of the contest once created; the update's body does not carry it.
  const idField = existing ? { value: existing.id, readOnly: true } : form.field('id', { required: true });

  return (
    <form onSubmit={form.submit(async (values) => onSaved(await save.mutateAsync(toInput(values, existing, f))))} noValidate>
      <Stack>
        <Card withBorder>
          <Stack>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput label={t('contests.id')} {...idField} description={t('contests.idHelp')} disabled={existing !== undefined} />
              <TextInput label={t('contests.contestTitle')} {...form.field('title')} />
            </SimpleGrid>
            <Textarea label={t('contests.description')} {...form.field('description')} />
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput type="datetime-local" label={t('competitions.startsAt')} {...form.field('starts_at', { required: true })} disabled={locked('starts_at')} />
              <TextInput type="datetime-local" label={t('competitions.endsAt')} {...form.field('ends_at', { required: true })} disabled={locked('ends_at')} />
            </SimpleGrid>
            <ZoneNote />
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('contests.scoring')}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 3 }}>
            <EventNamePicker form={form} operation={operation} name="scoring.event_type" label={t('contests.eventType')} required disabled={locked('scoring')} />
            <TextInput label={t('contests.scoreAttribute')} {...form.field('scoring.score_attribute', { required: true })} disabled={locked('scoring')} />
            <TextInput label={t('contests.weight')} {...form.field('scoring.weight', { number: true, required: true })} disabled={locked('scoring')} />
          </SimpleGrid>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('contests.prizes')}
          </Title>
          <Stack>
            {prizes.fields.map((prize, index) => (
              <Group key={prize.id} align="flex-start" wrap="wrap" data-testid="prize-tier">
                <TextInput w={130} label={t('contests.rankFrom')} {...form.field(`prize_structure.${index}.rank_from`, { number: true, required: true })} disabled={locked('prize_structure')} />
                <TextInput w={130} label={t('contests.rankTo')} {...form.field(`prize_structure.${index}.rank_to`, { number: true, required: true })} disabled={locked('prize_structure')} />
                <Controller
                  control={form.control}
                  name={`prize_structure.${index}.reward.type`}
                  render={({ field }) => (
                    <Select
                      ref={field.ref}
                      w={170}
                      label={t('contests.rewardType')}
                      data={REWARD_TYPES.map((value) => ({ value, label: t(`contests.rewardTypes.${value}`) }))}
                      value={field.value}
                      onChange={(value) => value && field.onChange(value)}
                      allowDeselect={false}
                      disabled={locked('prize_structure')}
                    />
                  )}
                />
                <TextInput w={150} label={t('contests.rewardValue')} {...form.field(`prize_structure.${index}.reward.value`, { number: true, required: true })} disabled={locked('prize_structure')} />
                <TextInput label={t('contests.rewardName')} {...form.field(`prize_structure.${index}.reward.name`)} disabled={locked('prize_structure')} />
                {prizes.fields.length > 1 && !locked('prize_structure') && (
                  <Button variant="outline" color="red.9" mt={24} onClick={() => prizes.remove(index)}>
                    {t('contests.removePrize', { n: index + 1 })}
                  </Button>
                )}
              </Group>
            ))}
            {!locked('prize_structure') && (
              <Button
                variant="default"
                onClick={() => {
                  const next = (Number(lastRank) || 0) + 1;
                  prizes.append({ rank_from: next, rank_to: next, label: '', reward: { type: 'voucher', value: 10, name: '' } });
                }}
              >
                {t('contests.addPrize')}
              </Button>
            )}
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput label={t('contests.maxLiability')} {...withHelp(form.field('max_reward_liability', { number: true }), t('contests.maxLiabilityHelp'))} disabled={locked('max_reward_liability')} />
              <TextInput label={t('contests.verificationWindow')} {...withHelp(form.field('verification_window_hours', { number: true }), t('contests.verificationWindowHelp'))} disabled={locked('verification_window_hours')} />
            </SimpleGrid>
          </Stack>
        </Card>
        <Card withBorder>
          <Title order={2} size="h4" mb="sm">
            {t('contests.fraudRules')}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            {NUMBER_RULES.map((key) => (
              <TextInput key={key} label={t(`contests.rules.${key}`)} {...form.field(`fraud_rules.${key}`, { number: true })} disabled={locked('fraud_rules')} />
            ))}
            {SWITCH_RULES.map((key) => (
              <Checkbox key={key} label={t(`contests.rules.${key}`)} {...form.register(`fraud_rules.${key}`)} disabled={locked('fraud_rules')} />
            ))}
          </SimpleGrid>
        </Card>
        {existing && existing.status !== 'draft' && <Text c="dimmed">{t('contests.frozen')}</Text>}
        <FormErrors form={form} />
        <Group>
          <Button type="submit" loading={form.formState.isSubmitting}>
            {existing ? t('contests.save') : t('contests.create')}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
