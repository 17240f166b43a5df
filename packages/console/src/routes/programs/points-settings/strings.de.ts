import type { Translation } from '../../../i18n/strings';
import type { pointValueStrings } from './strings';

/** The point value's strings in German. */
export const pointValueStringsDe: Translation<typeof pointValueStrings> = {
  pointValue: {
    title: 'Punktwert',
    explain: 'Was ein Punkt für Sie wert ist. Die Übersicht rechnet damit offene Punkte, die Verfallsprognose und den Verfall in Geld um.',
    label: 'Geldwert pro Punkt ({{currency}})',
    example: 'Zum Beispiel 0,01: Hundert Punkte sind 1 {{currency}} wert. Leer lassen, um nur Punkte anzuzeigen.',
    current: 'Aktuell: 1 Punkt = {{value}}; 1.000 Punkte = {{thousand}}',
    none: 'Es ist kein Punktwert festgelegt.',
  },
};
