import type { Translation } from '../../i18n/strings';
import type { reviewStrings } from './strings';

/** The Reviews section's strings in German. */
export const reviewStringsDe: Translation<typeof reviewStrings> = {
  nav: { groups: { publishing: 'Veröffentlichung' }, reviews: 'Prüfungen', waiting_one: '{{count}} Prüfung wartet auf Sie', waiting_other: '{{count}} Prüfungen warten auf Sie' },
  reviews: {
    title: 'Prüfungen',
    intro: 'Entwürfe, die auf eine Freigabe warten. Freigeben veröffentlicht den Entwurf so, wie er eingereicht wurde; Zurückgeben schickt ihn mit Ihrer Notiz an die Autorin oder den Autor zurück.',
    status: 'Status',
    kind: 'Art',
    allKinds: 'Alle Arten',
    item: 'Element',
    submittedBy: 'Eingereicht von',
    submittedAt: 'Eingereicht',
    note: 'Notiz',
    decision: 'Entscheidung',
    none: 'Hier gibt es keine Prüfungsanfrage.',
    statuses: { pending: 'Offen', approved: 'Freigegeben', returned: 'Zurückgegeben', published: 'Direkt veröffentlicht' },
    kinds: { rule: 'Punkteregel', engagement: 'Mitmachaktion', challenge: 'Herausforderung', contest: 'Wettbewerb', segment: 'Segment' },
    approve: 'Freigeben',
    approveNamed: '{{name}} freigeben',
    approveTitle: '„{{name}}“ freigeben?',
    approveMessage: 'Das Element ({{kind}}) wird jetzt veröffentlicht, genau so, wie es eingereicht wurde.',
    approveLiveMessage: 'Die Änderungen am laufenden Element ({{kind}}) gehen jetzt live, genau so, wie sie eingereicht wurden.',
    return: 'Zurückgeben',
    returnNamed: '{{name}} zurückgeben',
    returnTitle: '„{{name}}“ an die Autorin oder den Autor zurückgeben?',
    returnMessage: 'Es bleibt ein Entwurf. Schreiben Sie, was sich ändern soll.',
    returnLiveMessage: 'Das laufende Element ({{kind}}) läuft unverändert weiter; nur die eingereichten Änderungen gehen zurück. Schreiben Sie, was sich ändern soll.',
    returnNote: 'Notiz für die Autorin oder den Autor',
    decidedBy: '{{status}} von {{who}}',
    decidedAt: '{{status}} von {{who}}, {{when}}',
    backtest: 'Test der Autorin oder des Autors',
    noBacktest: 'Kein Test beigefügt.',
  },
};
