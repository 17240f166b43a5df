import type { Translation } from '../i18n/strings';
import type { publicationStrings } from './publication-controls.strings';

/** The publication controls' strings in German. */
export const publicationStringsDe: Translation<typeof publicationStrings> = {
  publication: {
    label: 'Veröffentlichung',
    draft: 'Entwurf',
    pending: 'Prüfung offen',
    pendingSince: 'Von {{who}} zur Prüfung eingereicht; eine freigebende Person gibt es frei oder zurück.',
    returned: 'Zurückgegeben von {{who}}: {{note}}',
    submit: 'Zur Prüfung einreichen',
    submitTitle: '„{{name}}“ zur Prüfung einreichen?',
    submitMessage: 'Eine freigebende Person gibt es frei (es geht live) oder gibt es Ihnen mit einer Notiz zurück. Sie können den Entwurf weiter ändern, müssen ihn nach einer Änderung aber erneut einreichen.',
    note: 'Notiz für die freigebende Person (optional)',
    reviews: 'Offene Prüfungen',
    publish: 'Veröffentlichen',
    pause: 'Pausieren',
    resume: 'Fortsetzen',
    unpublish: 'Zurückziehen',
    end: 'Beenden',
    confirmTitle: '{{action}}: „{{name}}“?',
    confirm: {
      publish: 'Es ist ab sofort für Teilnehmer live.',
      pause: 'Es gilt nicht mehr, bis es fortgesetzt wird.',
      resume: 'Es gilt ab jetzt wieder.',
      unpublish: 'Es wird von seiner Website genommen; seine Aktivitäten enden.',
      end: 'Es endet jetzt; Teilnehmer können keinen Fortschritt mehr erzielen.',
    },
    readOnly: 'Nur freigebende Personen können ändern, was live ist.',
    closesReview: 'Die von {{who}} eingereichte Prüfungsanfrage wird damit als direkt veröffentlicht geschlossen.',
    backtest: '{{from}} bis {{to}}: {{matched}} von {{scanned}} Ereignissen passten, {{participants}} Teilnehmer, {{points}} Punkte.',
    backtestCapped_one: '{{count}} Ereignis wurde begrenzt.',
    backtestCapped_other: '{{count}} Ereignisse wurden begrenzt.',
    backtestTruncated: 'Der Zeitraum enthielt mehr Ereignisse, als ein Backtest durchsucht: Die Zahlen betreffen die frühesten.',
    backtestAttached: 'Ihr letzter Backtest wird mit der Anfrage mitgeschickt:',
    noBacktest: 'In dieser Sitzung wurde die Regel noch nicht getestet: Testen Sie sie zuerst, damit die Freigabe sieht, was sie vergeben hätte.',
  },
};
