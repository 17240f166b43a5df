/**
 * Every text the runtime shows, in English and German, and the choice of
 * language. A catalogue is a set of functions, so a translation gets its
 * numbers, names and plurals in its own word order; numbers and dates are
 * formatted with `Intl` for the chosen locale.
 *
 * The language: an explicit `locale` (the embed URL's `locale` parameter or
 * the mount option), then the participant's locale when the service gives one
 * (`GET /api/v1/public/participant`, for a session the host issued), then the
 * browser's languages (`navigator.languages`), then English. A locale is
 * matched on its language (`de-AT` is German); one the runtime has no
 * catalogue for falls through to the next.
 */
export type AttemptKind = 'spin' | 'attempt';

export interface Catalogue {
  loading: string;
  retry: string;
  // Whole-page and activity errors (errors.ts).
  networkTitle: string;
  networkMessage: string;
  failedTitle: string;
  failedMessage: string;
  notAvailableTitle: string;
  notAvailableMessage: string;
  notRunningMessage: string;
  signInTitle: string;
  signInMessage: string;
  noAttemptsTitle: string;
  attemptsUsed(max: string | null): string;
  waitTitle: string;
  tryAgainIn(seconds: string | null): string;
  prizesGoneTitle: string;
  prizesGoneMessage: string;
  sessionEndedTitle: string;
  sessionEndedMessage: string;
  tooManyTitle: string;
  tooManyMessage(seconds: string | null): string;
  serviceProblemTitle: string;
  serviceProblemMessage: string;
  refusedTitle: string;
  refusedMessage: string;
  // Screens, gates, lists (app.ts).
  screens: string;
  points(count: number, formatted: string): string;
  lockedTag: string;
  tabLocked(name: string): string;
  unlocked(names: string): string;
  screenLocked(name: string | null): string;
  unlockHint: string;
  yourPoints: string;
  next: string;
  badges: string;
  yourRewards: string;
  noBadges: string;
  earned: string;
  notEarned: string;
  badgeImage(name: string): string;
  noRewards: string;
  rewardCode(code: string): string;
  validUntil(date: string): string;
  // Activities (activity.ts, wheel.ts, quiz.ts).
  unfinished(kind: AttemptKind): string;
  attemptsLeft(kind: AttemptKind, count: number, formatted: string): string;
  pointsAwarded(formatted: string): string;
  rewardWon(title: string): string;
  badgeEarned(name: string): string;
  spinTitle: string;
  spinButton: string;
  spinning: string;
  noPrize(label: string): string;
  won(label: string): string;
  wheelLabel(count: number, labels: string): string;
  quizTitle: string;
  submitAnswers: string;
  answerEveryQuestion: string;
  checking: string;
  quizScore(passed: boolean, correct: string, total: string, percent: string): string;
  passHint(percent: string): string;
}

const en: Catalogue = {
  loading: 'Loading…',
  retry: 'Try again',
  networkTitle: 'No connection',
  networkMessage: 'The engagement service cannot be reached. Check your connection and try again.',
  failedTitle: 'Something went wrong',
  failedMessage: 'The engagement could not be shown. Please try again.',
  notAvailableTitle: 'Not available',
  notAvailableMessage: 'This engagement is not available. It may have ended or not be published yet.',
  notRunningMessage: 'This engagement is not running any more.',
  signInTitle: 'Sign-in needed',
  signInMessage: 'To take part, please sign in on the site that shows this engagement.',
  noAttemptsTitle: 'No attempts left',
  attemptsUsed: (max) => (max ? `You have used all ${max} of your attempts.` : 'You have used all your attempts.'),
  waitTitle: 'Please wait',
  tryAgainIn: (seconds) => (seconds ? `You can try again in ${seconds} seconds.` : 'You can try again shortly.'),
  prizesGoneTitle: 'All prizes are gone',
  prizesGoneMessage: 'Every prize of this wheel has been won. Thank you for playing!',
  sessionEndedTitle: 'Session ended',
  sessionEndedMessage: 'Your session has expired or is not valid. Reload the page to start again.',
  tooManyTitle: 'Too many requests',
  tooManyMessage: (seconds) => `Please try again${seconds ? ` in ${seconds} seconds` : ' in a moment'}.`,
  serviceProblemTitle: 'Service problem',
  serviceProblemMessage: 'The engagement service had a problem. Please try again in a moment.',
  refusedTitle: 'That did not work',
  refusedMessage: 'The request was refused.',
  screens: 'Screens',
  points: (count, formatted) => `${formatted} ${count === 1 ? 'point' : 'points'}`,
  lockedTag: 'locked',
  tabLocked: (name) => `${name} (locked)`,
  unlocked: (names) => `Unlocked: ${names}!`,
  screenLocked: (name) => `${name ?? 'This screen'} is locked`,
  unlockHint: 'Complete the activities to unlock it.',
  yourPoints: 'Your points:',
  next: 'Next',
  badges: 'Badges',
  yourRewards: 'Your rewards',
  noBadges: 'No badges yet.',
  earned: '(earned)',
  notEarned: '(not earned yet)',
  badgeImage: (name) => `Badge: ${name}`,
  noRewards: 'No rewards yet.',
  rewardCode: (code) => `code ${code}`,
  validUntil: (date) => `(valid until ${date})`,
  unfinished: (kind) => `You have an unfinished ${kind === 'spin' ? 'spin' : 'attempt'}.`,
  attemptsLeft: (kind, count, formatted) => `${formatted} ${kind}${count === 1 ? '' : 's'} left.`,
  pointsAwarded: (formatted) => `+${formatted} points`,
  rewardWon: (title) => `Reward: ${title}`,
  badgeEarned: (name) => `Badge earned: ${name}`,
  spinTitle: 'Spin the wheel',
  spinButton: 'Spin the wheel',
  spinning: 'Spinning…',
  noPrize: (label) => `No prize this time: ${label}.`,
  won: (label) => `You won: ${label}!`,
  wheelLabel: (count, labels) => `Prize wheel with ${count} prizes: ${labels}`,
  quizTitle: 'Quiz',
  submitAnswers: 'Submit answers',
  answerEveryQuestion: 'Please answer every question.',
  checking: 'Checking your answers…',
  quizScore: (passed, correct, total, percent) => `${passed ? 'Passed' : 'Not passed'}: ${correct} of ${total} correct (${percent}).`,
  passHint: (percent) => `Answer at least ${percent} correctly to pass.`,
};

const de: Catalogue = {
  loading: 'Wird geladen …',
  retry: 'Erneut versuchen',
  networkTitle: 'Keine Verbindung',
  networkMessage: 'Der Aktionsdienst ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  failedTitle: 'Etwas ist schiefgelaufen',
  failedMessage: 'Die Aktion konnte nicht angezeigt werden. Bitte versuchen Sie es erneut.',
  notAvailableTitle: 'Nicht verfügbar',
  notAvailableMessage: 'Diese Aktion ist nicht verfügbar. Vielleicht ist sie beendet oder noch nicht veröffentlicht.',
  notRunningMessage: 'Diese Aktion läuft nicht mehr.',
  signInTitle: 'Anmeldung nötig',
  signInMessage: 'Um teilzunehmen, melden Sie sich bitte auf der Website an, die diese Aktion zeigt.',
  noAttemptsTitle: 'Keine Versuche mehr',
  attemptsUsed: (max) => (max ? `Sie haben alle ${max} Versuche verbraucht.` : 'Sie haben alle Versuche verbraucht.'),
  waitTitle: 'Bitte warten',
  tryAgainIn: (seconds) => (seconds ? `Sie können es in ${seconds} Sekunden erneut versuchen.` : 'Sie können es gleich erneut versuchen.'),
  prizesGoneTitle: 'Alle Preise sind vergeben',
  prizesGoneMessage: 'Alle Preise dieses Glücksrads wurden gewonnen. Danke fürs Mitspielen!',
  sessionEndedTitle: 'Sitzung beendet',
  sessionEndedMessage: 'Ihre Sitzung ist abgelaufen oder ungültig. Laden Sie die Seite neu, um neu zu beginnen.',
  tooManyTitle: 'Zu viele Anfragen',
  tooManyMessage: (seconds) => `Bitte versuchen Sie es ${seconds ? `in ${seconds} Sekunden` : 'gleich'} erneut.`,
  serviceProblemTitle: 'Problem beim Dienst',
  serviceProblemMessage: 'Beim Aktionsdienst ist ein Problem aufgetreten. Bitte versuchen Sie es gleich erneut.',
  refusedTitle: 'Das hat nicht geklappt',
  refusedMessage: 'Die Anfrage wurde abgelehnt.',
  screens: 'Seiten',
  points: (count, formatted) => `${formatted} ${count === 1 ? 'Punkt' : 'Punkte'}`,
  lockedTag: 'gesperrt',
  tabLocked: (name) => `${name} (gesperrt)`,
  unlocked: (names) => `Freigeschaltet: ${names}!`,
  screenLocked: (name) => (name ? `„${name}“ ist gesperrt` : 'Diese Seite ist gesperrt'),
  unlockHint: 'Schließen Sie die Aktivitäten ab, um sie freizuschalten.',
  yourPoints: 'Ihre Punkte:',
  next: 'Weiter',
  badges: 'Abzeichen',
  yourRewards: 'Ihre Prämien',
  noBadges: 'Noch keine Abzeichen.',
  earned: '(erhalten)',
  notEarned: '(noch nicht erhalten)',
  badgeImage: (name) => `Abzeichen: ${name}`,
  noRewards: 'Noch keine Prämien.',
  rewardCode: (code) => `Code ${code}`,
  validUntil: (date) => `(gültig bis ${date})`,
  unfinished: (kind) => (kind === 'spin' ? 'Sie haben eine unvollendete Drehung.' : 'Sie haben einen unvollendeten Versuch.'),
  attemptsLeft: (kind, count, formatted) =>
    kind === 'spin' ? `Noch ${formatted} ${count === 1 ? 'Drehung' : 'Drehungen'}.` : `Noch ${formatted} ${count === 1 ? 'Versuch' : 'Versuche'}.`,
  pointsAwarded: (formatted) => `+${formatted} Punkte`,
  rewardWon: (title) => `Prämie: ${title}`,
  badgeEarned: (name) => `Abzeichen erhalten: ${name}`,
  spinTitle: 'Glücksrad',
  spinButton: 'Glücksrad drehen',
  spinning: 'Das Rad dreht sich …',
  noPrize: (label) => `Diesmal kein Preis: ${label}.`,
  won: (label) => `Gewonnen: ${label}!`,
  wheelLabel: (count, labels) => `Glücksrad mit ${count} Preisen: ${labels}`,
  quizTitle: 'Quiz',
  submitAnswers: 'Antworten absenden',
  answerEveryQuestion: 'Bitte beantworten Sie jede Frage.',
  checking: 'Ihre Antworten werden geprüft …',
  quizScore: (passed, correct, total, percent) => `${passed ? 'Bestanden' : 'Nicht bestanden'}: ${correct} von ${total} richtig (${percent}).`,
  passHint: (percent) => `Beantworten Sie mindestens ${percent} richtig, um zu bestehen.`,
};

/** The catalogues by language subtag; English is the fallback. */
export const CATALOGUES: Record<string, Catalogue> = { en, de };
export const FALLBACK_LOCALE = 'en';

/** The canonical form of a BCP 47 tag, or null when it is not one. */
function canonical(tag: string | null | undefined): string | null {
  if (!tag || tag.length > 35) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

/**
 * The locale to show: the first candidate whose language the runtime has a
 * catalogue for (`explicit`, then `participant`, then the browser's
 * languages), else English. The result keeps the region (`de-AT`), so
 * numbers and dates follow it.
 */
export function chooseLocale(explicit: string | null | undefined, participant: string | null | undefined, browser: readonly string[]): string {
  for (const candidate of [explicit, participant, ...browser]) {
    const tag = canonical(candidate);
    if (tag && CATALOGUES[tag.split('-')[0].toLowerCase()]) return tag;
  }
  return FALLBACK_LOCALE;
}

export interface Translator {
  locale: string;
  /** The catalogue's language (`en`, `de`), for `<html lang>`. */
  language: string;
  t: Catalogue;
  number(value: number): string;
  percent(value: number): string;
  date(iso: string): string;
}

export function translator(locale: string): Translator {
  const language = locale.split('-')[0].toLowerCase();
  const t = CATALOGUES[language] ?? en;
  const numbers = new Intl.NumberFormat(locale);
  const percents = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 1 });
  const dates = new Intl.DateTimeFormat(locale, { dateStyle: 'medium' });
  return {
    locale,
    language: CATALOGUES[language] ? language : FALLBACK_LOCALE,
    t,
    number: (value) => numbers.format(value),
    percent: (value) => percents.format(value / 100),
    date: (iso) => {
      const parsed = new Date(iso);
      return Number.isNaN(parsed.getTime()) ? iso : dates.format(parsed);
    },
  };
}

/**
 * The page's translator. The runtime runs once per page (the embed page is
 * its own document), so one translator for the page is enough; `mount` sets
 * it before anything renders.
 */
let current: Translator = translator(FALLBACK_LOCALE);

export function useLocale(locale: string): Translator {
  current = translator(locale);
  return current;
}

export function i18n(): Translator {
  return current;
}
