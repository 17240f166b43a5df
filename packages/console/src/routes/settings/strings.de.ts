import type { Translation } from '../../i18n/strings';
import type { settingsStrings } from './strings';

/** The tenant settings' strings in German. */
export const settingsStringsDe: Translation<typeof settingsStrings> = {
  tenantSettings: {
    title: 'Zeitzone, Währung und Sprache',
    timezone: 'Zeitzone',
    timezoneHelp: 'Legt fest, wann die Tage des Mandanten beginnen: Tageslimits, Serien, Ranglistenzeiträume und die Tage der Übersicht.',
    currency: 'Währung',
    locale: 'Gebietsschema',
    localeHelp: 'Ein Sprach-Tag wie en-US, fr-FR oder de.',
    save: 'Einstellungen speichern',
    saved: 'Einstellungen gespeichert.',
  },
  fourEyes: {
    title: 'Vier-Augen-Prinzip',
    label: 'Veröffentlichen nur mit Freigabe durch eine zweite Person',
    help: 'Wenn aktiviert, veröffentlicht niemand Regeln, Mitmachaktionen, Herausforderungen oder Wettbewerbe direkt, auch nicht per API-Schlüssel: Alles läuft über eine Prüfungsanfrage, die eine andere Person als die einreichende freigibt.',
  },
};
