import { useTranslation } from 'react-i18next';
import type { SegmentFact } from '../../../hooks/api/segments';

const NAMED = ['tier', 'available_points', 'lifetime_points', 'badges', 'days_since_last_activity', 'days_since_joined', 'event_count', 'referrals_converted', 'contests_entered'] as const;

/** A fact in words: the console's name for the fixed ones, "Profile: email" or "Custom field: …" for the families. */
export function useFactLabel() {
  const { t } = useTranslation();
  return (fact: Pick<SegmentFact, 'fact'>): string => {
    const name = fact.fact;
    if ((NAMED as readonly string[]).includes(name)) return t(`segments.facts.${name as (typeof NAMED)[number]}`);
    const dot = name.indexOf('.');
    const family = dot > 0 ? name.slice(0, dot) : '';
    const rest = name.slice(dot + 1);
    if (family === 'profile') return t('segments.factFamilies.profile', { name: rest });
    if (family === 'custom') return t('segments.factFamilies.custom', { name: rest });
    if (family === 'streak') return t('segments.factFamilies.streak', { name: rest });
    return name;
  };
}
