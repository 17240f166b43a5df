import type { FieldValues } from 'react-hook-form';
import { fieldErrorWords, fieldHint, fieldRule, type ApiForm } from '../../../lib/forms';

/**
 * The activities and screens editors keep their inputs outside the form's
 * registration (their lists grow and shrink), so the service's refusals of
 * their fields (`/activities/0/segments/1/weight`) reach them through this
 * lookup, in plain words; `<FormErrors>` lists them too, by path.
 */
export type ProblemOf = (pointer: string) => string | undefined;

export function problemsOf<T extends FieldValues>(form: Pick<ApiForm<T>, 'refusal'>): ProblemOf {
  const byPointer = new Map<string, string>();
  for (const error of form.refusal?.unplaced ?? []) if (error.in === 'body' && !byPointer.has(error.path)) byPointer.set(error.path, fieldErrorWords(error));
  return (pointer) => byPointer.get(pointer);
}

export const NO_PROBLEMS: ProblemOf = () => undefined;

/** What a field of an engagement accepts ("1 to 1,000,000"), from the service's schema. */
export function engagementHint(name: string): string | undefined {
  return fieldHint(fieldRule('createEngagement', name));
}
