import type { Translation } from '../../i18n/strings';
import type { reviewStrings } from './strings';

/** The Reviews section's strings in German. */
export const reviewStringsDe: Translation<typeof reviewStrings> = {
  nav: { groups: { publishing: 'Veröffentlichung' }, reviews: 'Prüfungen' },
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
    statuses: { pending: 'Offen', approved: 'Freigegeben', returned: 'Zurückgegeben' },
    kinds: { rule: 'Punkteregel', engagement: 'Mitmachaktion', challenge: 'Herausforderung', contest: 'Wettbewerb' },
    approve: 'Freigeben',
    approveNamed: '{{name}} freigeben',
    approveTitle: '„{{name}}“ freigeben?',
    approveMessage: 'Das Element ({{kind}}) wird jetzt veröffentlicht, genau so, wie es eingereicht wurde.',
    return: 'Zurückgeben',
    returnNamed: '{{name}} zurückgeben',
    returnTitle: '„{{name}}“ an die Autorin oder den Autor zurückgeben?',
    returnMessage: 'Es bleibt ein Entwurf. Schreiben Sie, was sich ändern soll.',
    returnNote: 'Notiz für die Autorin oder den Autor',
    decidedBy: '{{status}} von {{who}}',
  },
};
