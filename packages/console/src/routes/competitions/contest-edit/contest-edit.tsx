import { useEffect, useState } from 'react';
import { Anchor, Button, Card, Checkbox, Group, NumberInput, Select, SimpleGrid, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useParams } from 'react-router';
import { useContest, useSaveContest, type Contest, type ContestInput } from '../../../hooks/api/contests';
import { ErrorAlert } from '../../../components/error-alert';
import { PageHeader } from '../../../components/page-header';
import { Loading } from '../../../components/loading';
import { defaultWindow, fromLocalInput, toLocalInput } from '../common/dates';

type Prize = ContestInput['prize_structure'][number];
type RewardType = Prize['reward']['type'];
const REWARD_TYPES: RewardType[] = ['voucher', 'coupon', 'cash', 'points_multiplier', 'physical', 'digital'];
const NUMBER_RULES = ['max_score_per_minute', 'max_score_per_hour', 'max_rank_jump_per_hour', 'review_threshold_score'] as const;
const SWITCH_RULES = ['block_disposable_emails', 'block_repeat_payment_methods', 'block_repeat_devices', 'auto_disqualify_on_velocity_breach'] as const;

interface PrizeDraft {
  rank_from: number | string;
  rank_to: number | string;
  label: string;
  type: RewardType;
  value: number | string;
  name: string;
}
interface Draft {
  id: string;
  title: string;
  description: string;
  starts_at: string;
  ends_at: string;
  event_type: string;
  score_attribute: string;
  weight: number | string;
  prizes: PrizeDraft[];
  max_reward_liability: number | string;
  verification_window_hours: number | string;
  numbers: Record<(typeof NUMBER_RULES)[number], number | string>;
  switches: Record<(typeof SWITCH_RULES)[number], boolean>;
}

/** What the server lets change in each status (scoring and prizes freeze at publication; once running, only the words). */
const EDITABLE: Record<Contest['status'], ReadonlyArray<keyof ContestInput> | 'all'> = {
  draft: 'all',
  scheduled: ['title', 'description', 'starts_at', 'ends_at', 'max_reward_liability', 'fraud_rules', 'verification_window_hours'],
  active: ['title', 'description'],
  scoring: ['title', 'description'],
  completed: ['title', 'description'],
};

function emptyDraft(): Draft {
  const window = defaultWindow(1, 7);
  return {
    id: '',
    title: '',
    description: '',
    starts_at: toLocalInput(window.starts_at),
    ends_at: toLocalInput(window.ends_at),
    event_type: '',
    score_attribute: 'score',
    weight: 1,
    prizes: [{ rank_from: 1, rank_to: 1, label: '', type: 'voucher', value: 50, name: '' }],
    max_reward_liability: 1000,
    verification_window_hours: 24,
    numbers: { max_score_per_minute: '', max_score_per_hour: '', max_rank_jump_per_hour: '', review_threshold_score: '' },
    switches: { block_disposable_emails: false, block_repeat_payment_methods: false, block_repeat_devices: false, auto_disqualify_on_velocity_breach: false },
  };
}

function fromContest(c: Contest): Draft {
  const rules = c.fraud_rules as Record<string, number | boolean | undefined>;
  return {
    id: c.id,
    title: c.title,
    description: c.description ?? '',
    starts_at: toLocalInput(c.starts_at),
    ends_at: toLocalInput(c.ends_at),
    event_type: c.scoring.event_type,
    score_attribute: c.scoring.score_attribute,
    weight: c.scoring.weight,
    prizes: c.prize_structure.map((p) => ({ rank_from: p.rank_from, rank_to: p.rank_to, label: p.label ?? '', type: p.reward.type, value: p.reward.value, name: p.reward.name ?? '' })),
    max_reward_liability: c.max_reward_liability,
    verification_window_hours: c.verification_window_hours,
    numbers: Object.fromEntries(NUMBER_RULES.map((k) => [k, typeof rules[k] === 'number' ? (rules[k] as number) : ''])) as Draft['numbers'],
    switches: Object.fromEntries(SWITCH_RULES.map((k) => [k, rules[k] === true])) as Draft['switches'],
  };
}

function toInput(draft: Draft, existing: Contest | undefined): ContestInput {
  const fraud_rules: Record<string, number | boolean> = {};
  for (const key of NUMBER_RULES) if (draft.numbers[key] !== '') fraud_rules[key] = Number(draft.numbers[key]);
  for (const key of SWITCH_RULES) fraud_rules[key] = draft.switches[key];
  const full: ContestInput = {
    id: draft.id.trim(),
    title: draft.title.trim(),
    description: draft.description,
    starts_at: fromLocalInput(draft.starts_at),
    ends_at: fromLocalInput(draft.ends_at),
    scoring: { event_type: draft.event_type.trim(), score_attribute: draft.score_attribute.trim(), weight: Number(draft.weight) },
    prize_structure: draft.prizes.map((p) => ({
      rank_from: Number(p.rank_from),
      rank_to: Number(p.rank_to),
      ...(p.label.trim() ? { label: p.label.trim() } : {}),
      reward: { type: p.type, value: Number(p.value), ...(p.name.trim() ? { name: p.name.trim() } : {}) },
    })),
    max_reward_liability: Number(draft.max_reward_liability),
    fraud_rules: fraud_rules as ContestInput['fraud_rules'],
    verification_window_hours: Number(draft.verification_window_hours),
  };
  const editable = existing ? EDITABLE[existing.status] : 'all';
  if (editable === 'all') return full;
  return { id: full.id, ...Object.fromEntries(editable.map((key) => [key, full[key]])) } as ContestInput;
}

export function ContestEdit() {
  const { t } = useTranslation();
  const contestId = useParams().contestId;
  const navigate = useNavigate();
  const contest = useContest(contestId);
  const save = useSaveContest(contestId);
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  useEffect(() => {
    if (contest.data) setDraft(fromContest(contest.data));
  }, [contest.data]);
  if (contestId && contest.isPending) return <Loading />;
  if (contestId && contest.error) return <ErrorAlert error={contest.error} />;
  const existing = contest.data;
  const editable = existing ? EDITABLE[existing.status] : 'all';
  const locked = (field: keyof ContestInput) => editable !== 'all' && !editable.includes(field);
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const setPrize = (index: number, patch: Partial<PrizeDraft>) => setDraft((d) => ({ ...d, prizes: d.prizes.map((p, i) => (i === index ? { ...p, ...patch } : p)) }));
  const detailPath = (id: string) => `/competitions/contests/${encodeURIComponent(id)}`;

  return (
    <Stack>
      <Anchor component={Link} to={existing ? detailPath(existing.id) : '/competitions/contests'}>
        {existing ? t('contests.backToContest') : t('contests.back')}
      </Anchor>
      <PageHeader title={existing ? t('contests.editTitle', { title: existing.title }) : t('contests.new')} />
      <form
        onSubmit={(event) => {
          event.preventDefault();
          save.mutate(toInput(draft, existing), { onSuccess: (saved) => navigate(detailPath(saved.id)) });
        }}
      >
        <Stack>
          <Card withBorder>
            <Stack>
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <TextInput label={t('contests.id')} description={t('contests.idHelp')} value={draft.id} onChange={(e) => set({ id: e.currentTarget.value })} required disabled={existing !== undefined} />
                <TextInput label={t('contests.contestTitle')} value={draft.title} onChange={(e) => set({ title: e.currentTarget.value })} required />
              </SimpleGrid>
              <Textarea label={t('contests.description')} value={draft.description} onChange={(e) => set({ description: e.currentTarget.value })} />
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <TextInput type="datetime-local" label={t('competitions.startsAt')} value={draft.starts_at} onChange={(e) => set({ starts_at: e.currentTarget.value })} required disabled={locked('starts_at')} />
                <TextInput type="datetime-local" label={t('competitions.endsAt')} value={draft.ends_at} onChange={(e) => set({ ends_at: e.currentTarget.value })} required disabled={locked('ends_at')} />
              </SimpleGrid>
            </Stack>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('contests.scoring')}
            </Title>
            <SimpleGrid cols={{ base: 1, sm: 3 }}>
              <TextInput label={t('contests.eventType')} value={draft.event_type} onChange={(e) => set({ event_type: e.currentTarget.value })} required disabled={locked('scoring')} />
              <TextInput label={t('contests.scoreAttribute')} value={draft.score_attribute} onChange={(e) => set({ score_attribute: e.currentTarget.value })} required disabled={locked('scoring')} />
              <NumberInput label={t('contests.weight')} min={0.0001} value={draft.weight} onChange={(value) => set({ weight: value })} required disabled={locked('scoring')} />
            </SimpleGrid>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('contests.prizes')}
            </Title>
            <Stack>
              {draft.prizes.map((prize, index) => (
                <Group key={index} align="flex-end" wrap="wrap" data-testid="prize-tier">
                  <NumberInput w={110} label={t('contests.rankFrom')} min={1} allowDecimal={false} value={prize.rank_from} onChange={(value) => setPrize(index, { rank_from: value })} required disabled={locked('prize_structure')} />
                  <NumberInput w={110} label={t('contests.rankTo')} min={1} allowDecimal={false} value={prize.rank_to} onChange={(value) => setPrize(index, { rank_to: value })} required disabled={locked('prize_structure')} />
                  <Select
                    w={170}
                    label={t('contests.rewardType')}
                    data={REWARD_TYPES.map((value) => ({ value, label: t(`contests.rewardTypes.${value}`) }))}
                    value={prize.type}
                    onChange={(value) => value && setPrize(index, { type: value as RewardType })}
                    allowDeselect={false}
                    disabled={locked('prize_structure')}
                  />
                  <NumberInput w={130} label={t('contests.rewardValue')} min={0} value={prize.value} onChange={(value) => setPrize(index, { value })} required disabled={locked('prize_structure')} />
                  <TextInput label={t('contests.rewardName')} value={prize.name} onChange={(e) => setPrize(index, { name: e.currentTarget.value })} disabled={locked('prize_structure')} />
                  {draft.prizes.length > 1 && !locked('prize_structure') && (
                    <Button variant="outline" color="red.9" onClick={() => set({ prizes: draft.prizes.filter((_, i) => i !== index) })}>
                      {t('contests.removePrize', { n: index + 1 })}
                    </Button>
                  )}
                </Group>
              ))}
              {!locked('prize_structure') && (
                <Button variant="default" onClick={() => set({ prizes: [...draft.prizes, { rank_from: Number(draft.prizes.at(-1)?.rank_to ?? 0) + 1, rank_to: Number(draft.prizes.at(-1)?.rank_to ?? 0) + 1, label: '', type: 'voucher', value: 10, name: '' }] })}>
                  {t('contests.addPrize')}
                </Button>
              )}
              <SimpleGrid cols={{ base: 1, sm: 2 }}>
                <NumberInput label={t('contests.maxLiability')} description={t('contests.maxLiabilityHelp')} min={0} value={draft.max_reward_liability} onChange={(value) => set({ max_reward_liability: value })} required disabled={locked('max_reward_liability')} />
                <NumberInput label={t('contests.verificationWindow')} description={t('contests.verificationWindowHelp')} min={24} max={72} allowDecimal={false} value={draft.verification_window_hours} onChange={(value) => set({ verification_window_hours: value })} required disabled={locked('verification_window_hours')} />
              </SimpleGrid>
            </Stack>
          </Card>
          <Card withBorder>
            <Title order={2} size="h4" mb="sm">
              {t('contests.fraudRules')}
            </Title>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              {NUMBER_RULES.map((key) => (
                <NumberInput
                  key={key}
                  label={t(`contests.rules.${key}`)}
                  min={0}
                  value={draft.numbers[key]}
                  onChange={(value) => set({ numbers: { ...draft.numbers, [key]: value } })}
                  disabled={locked('fraud_rules')}
                />
              ))}
              {SWITCH_RULES.map((key) => (
                <Checkbox
                  key={key}
                  label={t(`contests.rules.${key}`)}
                  checked={draft.switches[key]}
                  onChange={(e) => set({ switches: { ...draft.switches, [key]: e.currentTarget.checked } })}
                  disabled={locked('fraud_rules')}
                />
              ))}
            </SimpleGrid>
          </Card>
          {existing && existing.status !== 'draft' && <Text c="dimmed">{t('contests.frozen')}</Text>}
          <ErrorAlert error={save.error} />
          <Group>
            <Button type="submit" loading={save.isPending}>
              {existing ? t('contests.save') : t('contests.create')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Stack>
  );
}
