import type { Translation } from '../../i18n/strings';
import type { fraudStrings } from './strings';

/** The fraud review queue's strings in German. */
export const fraudStringsDe: Translation<typeof fraudStrings> = {
  nav: { groups: { fraud: 'Betrugsprüfung' }, fraudReview: 'Prüfwarteschlange' },
  fraud: {
    title: 'Warteschlange der Betrugsprüfung',
    explain: 'Wettbewerbsteilnahmen, die eine Betrugskontrolle angehalten hat, und als verdächtig angehaltene Empfehlungen warten hier auf eine Entscheidung. Jede Entscheidung wird mit Person, Zeitpunkt und Begründung gespeichert.',
    kind: 'Art',
    kinds: { contest_entry: 'Wettbewerbsteilnahme', referral: 'Empfehlung' },
    statuses: { pending: 'Offen', approved: 'Bestätigt', disqualified: 'Disqualifiziert' },
    subject: 'Wer',
    reasons: 'Grund für das Anhalten',
    heldAt: 'Angehalten',
    none: 'Nichts zu prüfen.',
    approve: 'Bestätigen',
    approveNamed: '{{subject}} bestätigen',
    approveTitle: 'Bestätigen',
    approveConfirm: '{{subject}} bestätigen: Ein Wettbewerbsgewinner geht weiter zur Verifizierung und erhält einen Preis; eine Empfehlung zählt für die empfehlende Person.',
    disqualify: 'Disqualifizieren',
    disqualifyNamed: '{{subject}} disqualifizieren',
    disqualifyTitle: 'Disqualifizieren',
    disqualifyConfirm: '{{subject}} disqualifizieren: Eine Wettbewerbsteilnahme fällt aus der Rangliste und verliert ihren Preis; eine Empfehlung zählt nie. Das lässt sich nicht rückgängig machen.',
    reason: 'Begründung (wird im Entscheidungsverlauf gespeichert)',
    readOnly: 'Als {{role}} sehen Sie die Warteschlange und ihre Verläufe; Entscheiden erfordert die Rolle Betrugsprüfung (Berechtigung fraud:decide): Die Entscheidungsschaltflächen sind deaktiviert.',
    trailToggle: 'Verlauf',
    trailNamed: 'Entscheidungsverlauf von {{subject}}',
    trail: {
      held: 'Angehalten am {{at}}: {{reasons}}',
      decided: '{{decision}} von {{by}}, {{at}}: {{reason}}',
      undecided: 'Noch nicht entschieden.',
      entryHistory: 'Statusverlauf der Teilnahme',
      move: '{{from}} → {{to}} von {{by}}, {{at}}: {{reason}}',
    },
    signals: {
      review_threshold_score: 'Bewertung über der Prüfschwelle',
      flagged: 'Eine Betrugskontrolle hat bei der Bewertung angeschlagen',
      same_device: 'Gleiches Gerät wie die empfehlende Person',
      same_ip: 'Gleiche IP-Adresse wie die empfehlende Person',
      velocity_per_hour: 'Zu viele Abschlüsse in dieser Stunde',
      velocity_per_day: 'Zu viele Abschlüsse an einem Tag',
    },
  },
};
