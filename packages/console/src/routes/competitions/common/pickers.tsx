import { useTranslation } from 'react-i18next';
import type { FieldValues } from 'react-hook-form';
import { useRules } from '../../../hooks/api/programs';
import { useContests } from '../../../hooks/api/contests';
import { useChallenges } from '../../../hooks/api/challenges';
import { BadgePicker as SharedBadgePicker, EventNamePicker as SharedEventNamePicker, type PickerProps } from '../../../components/pickers';

/**
 * The event names the tenant's programs already use (its rules' triggers,
 * its contests' scoring and its challenges' objectives): offered beside the
 * names it has sent, since a contest may well score an event not sent yet.
 */
function useUsedEventNames(): string[] {
  const rules = useRules({ trigger: 'event' });
  const contests = useContests({});
  const challenges = useChallenges({});
  const names = new Set<string>();
  for (const rule of rules.data?.rules ?? []) if (rule.event_name) names.add(rule.event_name);
  for (const contest of contests.data?.contests ?? []) names.add(contest.scoring.event_type);
  for (const challenge of challenges.data?.challenges ?? []) for (const objective of challenge.objectives) if (objective.event_name) names.add(objective.event_name);
  return [...names];
}

/** An event name: the names sent and those in use offered, a new one still typed freely. */
export function EventNamePicker<T extends FieldValues>(props: PickerProps<T>) {
  const { t } = useTranslation();
  return <SharedEventNamePicker {...props} extraNames={useUsedEventNames()} description={props.description ?? t('competitions.pickers.eventHint')} />;
}

/** A badge by its name (the code is what is sent); empty for none. */
export function BadgePicker<T extends FieldValues>(props: PickerProps<T>) {
  const { t } = useTranslation();
  return <SharedBadgePicker {...props} description={props.description ?? t('competitions.pickers.badgeHint')} placeholder={t('competitions.pickers.noBadge')} />;
}
