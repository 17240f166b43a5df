import { useCallback, useEffect, useRef, useState } from 'react';
import { Alert, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { useForm, type FieldValues, type Path, type RegisterOptions, type UseFormProps, type UseFormReturn } from 'react-hook-form';
import { LoyaltyError, type LoyaltyFieldError } from '@loyalty/sdk';
import requestRules from 'virtual:request-rules';
import i18n from '../i18n';
import { errorDetail } from '../api/client';

/**
 * Forms on react-hook-form whose checks come from the service's own schema
 * (`virtual:request-rules`, drawn from /openapi.json at build time) and whose
 * server refusals land on their fields:
 *
 *   const form = useApiForm<RuleValues>('createRule', { defaultValues });
 *   <form onSubmit={form.submit((values) => create.mutateAsync(toBody(values)))} noValidate>
 *     <TextInput label={t('…')} {...form.field('name')} />
 *     <FormErrors form={form} />
 *
 * `field(name)` gives a Mantine input its registration, its error in plain
 * words, its `required` mark and the field's limits as the description before
 * they are broken ("12 to 200 characters"). A 400/422 whose `errors[].path`
 * names a field (`/effects/0/points` → `effects.0.points`) is shown on that
 * field, the first one focused; the rest, with the request id, in
 * `<FormErrors>` at the submit button. Numbers are never clamped: an
 * out-of-range value is refused with the limit named.
 */
export interface FieldRule {
  type?: string;
  required?: boolean;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  format?: string;
  enum?: unknown[];
  minItems?: number;
  maxItems?: number;
}

/** A form field name (`effects.0.points`) as the rules' pointer (`/effects/*\/points`). */
function pointerOf(name: string): string {
  return `/${name.split('.').map((part) => (/^\d+$/.test(part) ? '*' : part)).join('/')}`;
}

/** The limits the service's schema sets on a field of an operation's body. */
export function fieldRule(operation: string, name: string): FieldRule | undefined {
  return (requestRules as Record<string, Record<string, FieldRule>>)[operation]?.[pointerOf(name)];
}

/** One server field error in the console's language: by its code and bound; the service's own words for a code the console does not know. */
export function fieldErrorWords(error: Pick<LoyaltyFieldError, 'code' | 'message' | 'allowed' | 'limit'>): string {
  const key = `forms.errors.${error.code}`;
  const needsLimit = BOUNDED.has(error.code) && typeof error.limit !== 'number';
  const needsAllowed = error.code === 'enum' && !error.allowed?.length;
  if (!i18n.exists(key) || needsLimit || needsAllowed) return error.message;
  const limit = typeof error.limit === 'number' ? new Intl.NumberFormat(i18n.language).format(error.limit) : undefined;
  return i18n.t(key, { limit, count: error.limit, allowed: (error.allowed ?? []).map(String).join(', ') });
}

const HINTED_MAXIMUM_LIMIT = 1e12;

const BOUNDED = new Set(['minimum', 'maximum', 'exclusive_minimum', 'exclusive_maximum', 'multiple_of', 'min_length', 'max_length', 'min_items', 'max_items']);

/** "12 to 200 characters", "1 to 1,000,000,000", "up to 2,000 characters": what a field accepts, before it is broken. */
export function fieldHint(rule: FieldRule | undefined): string | undefined {
  if (!rule) return undefined;
  const n = (value: number) => new Intl.NumberFormat(i18n.language).format(value);
  if (rule.type === 'string' || rule.minLength !== undefined || rule.maxLength !== undefined) {
    const min = rule.minLength ?? 0;
    if (min > 1 && rule.maxLength !== undefined) return i18n.t('forms.hints.lengthBetween', { min: n(min), max: n(rule.maxLength) });
    if (min > 1) return i18n.t('forms.hints.lengthAtLeast', { min: n(min) });
    if (rule.maxLength !== undefined && rule.maxLength < 1000) return i18n.t('forms.hints.lengthAtMost', { max: n(rule.maxLength) });
    return undefined;
  }
  if (rule.type === 'integer' || rule.type === 'number') {
    const min = rule.minimum;
    // A bound no person types (the largest safe integer) is a machine limit, not a hint.
    if (rule.maximum !== undefined && rule.maximum >= HINTED_MAXIMUM_LIMIT) rule = { ...rule, maximum: undefined };
    if (min !== undefined && rule.maximum !== undefined) return i18n.t('forms.hints.between', { min: n(min), max: n(rule.maximum) });
    if (min !== undefined) return i18n.t('forms.hints.atLeast', { min: n(min) });
    if (rule.exclusiveMinimum !== undefined && rule.maximum !== undefined) return i18n.t('forms.hints.greaterThanUpTo', { min: n(rule.exclusiveMinimum), max: n(rule.maximum) });
    if (rule.exclusiveMinimum !== undefined) return i18n.t('forms.hints.greaterThan', { min: n(rule.exclusiveMinimum) });
    if (rule.maximum !== undefined) return i18n.t('forms.hints.atMost', { max: n(rule.maximum) });
  }
  return undefined;
}

/** react-hook-form's checks for a field, from its rule, with messages in the console's language. */
export function registerRules(rule: FieldRule | undefined, options: { required?: boolean; number?: boolean } = {}): RegisterOptions {
  const words = (code: string, limit?: number) => fieldErrorWords({ code, message: code, limit });
  const required = options.required ?? rule?.required ?? false;
  const checks: RegisterOptions = {};
  if (required) checks.required = words('required');
  if (options.number || rule?.type === 'integer' || rule?.type === 'number') {
    checks.setValueAs = (value: unknown) => (value === '' || value === null || value === undefined ? undefined : typeof value === 'number' ? value : Number(value));
    checks.validate = (value: unknown) => {
      if (value === undefined) return true;
      if (typeof value !== 'number' || Number.isNaN(value)) return words('type_number');
      if (rule?.type === 'integer' && !Number.isInteger(value)) return words('type_integer');
      if (rule?.minimum !== undefined && value < rule.minimum) return words('minimum', rule.minimum);
      if (rule?.exclusiveMinimum !== undefined && value <= rule.exclusiveMinimum) return words('exclusive_minimum', rule.exclusiveMinimum);
      if (rule?.maximum !== undefined && value > rule.maximum) return words('maximum', rule.maximum);
      return true;
    };
    return checks;
  }
  if (rule?.minLength !== undefined && rule.minLength > 1) checks.minLength = { value: rule.minLength, message: words('min_length', rule.minLength) };
  if (rule?.maxLength !== undefined) checks.maxLength = { value: rule.maxLength, message: words('max_length', rule.maxLength) };
  if (rule?.pattern) {
    try {
      checks.pattern = { value: new RegExp(rule.pattern, 'u'), message: words('pattern') };
    } catch {
      // A pattern the browser cannot compile is left to the server.
    }
  }
  return checks;
}

export interface FieldOptions {
  /** Overrides the schema's required mark (a field the form always fills, or one the form requires though the API does not). */
  required?: boolean;
  /** The value is a number (a `type="number"` input): read as a number, never clamped. */
  number?: boolean;
  /** The body field this form field is sent as, when the names differ (`/effects/0/points` for `points`). */
  pointer?: string;
  /** The field's limits when the operation's schema does not hold them (a reward type's metadata fields, read from the service). */
  rule?: FieldRule;
}

export interface ApiForm<T extends FieldValues> extends UseFormReturn<T> {
  /** Registration, error, required mark and limits for a Mantine input: `<TextInput {...form.field('name')} />`. */
  field(name: Path<T>, options?: FieldOptions): Record<string, unknown>;
  /** The error of a field in plain words (for inputs under a `Controller`). */
  errorOf(name: Path<T>): string | undefined;
  /** An onSubmit handler: runs the action with the form's values; a refusal lands on its fields. */
  submit(action: (values: T) => Promise<unknown>): (event?: React.BaseSyntheticEvent) => Promise<void>;
  /** What the last refusal said that no field took, for `<FormErrors>`. */
  refusal: { error: unknown; unplaced: LoyaltyFieldError[] } | null;
  /** Forget the last refusal (a dialog closed). */
  clearRefusal(): void;
}

function nameOfPointer(pointer: string): string {
  return pointer
    .replace(/^\//, '')
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
}

/** A react-hook-form form for one operation of the API. */
export function useApiForm<T extends FieldValues>(operation: string, props: UseFormProps<T> = {}): ApiForm<T> {
  const form = useForm<T>({ mode: 'onTouched', shouldFocusError: true, ...props });
  const [refusal, setRefusal] = useState<ApiForm<T>['refusal']>(null);
  const fields = useRef(new Map<string, string>());

  const errorOf = useCallback(
    (name: Path<T>) => {
      const state = form.getFieldState(name, form.formState);
      return state.error?.message ? String(state.error.message) : undefined;
    },
    [form],
  );

  const field = (name: Path<T>, options: FieldOptions = {}) => {
    const rule = options.rule ?? fieldRule(operation, options.pointer ? nameOfPointer(options.pointer) : name);
    fields.current.set(options.pointer ?? `/${name.split('.').join('/')}`, name);
    const required = options.required ?? rule?.required ?? false;
    return {
      ...form.register(name, registerRules(rule, { required, number: options.number }) as RegisterOptions<T, Path<T>>),
      error: errorOf(name),
      required,
      description: fieldHint(rule),
      ...(options.number ? { type: 'number', inputMode: 'decimal' } : {}),
    };
  };

  const submit = (action: (values: T) => Promise<unknown>) =>
    form.handleSubmit(async (values) => {
      setRefusal(null);
      try {
        await action(values);
      } catch (error) {
        const fieldErrors = error instanceof LoyaltyError ? error.errors : [];
        const unplaced: LoyaltyFieldError[] = [];
        let focused = false;
        for (const fieldError of fieldErrors) {
          const name = fieldError.in === 'body' ? (fields.current.get(fieldError.path) ?? null) : null;
          if (!name) {
            unplaced.push(fieldError);
            continue;
          }
          form.setError(name as Path<T>, { type: 'server', message: fieldErrorWords(fieldError) }, { shouldFocus: !focused });
          focused = true;
        }
        setRefusal({ error, unplaced });
      }
    });

  return Object.assign(form, { field, errorOf, submit, refusal, clearRefusal: () => setRefusal(null) });
}

/**
 * What a refusal said that no field took: the service's detail (or each
 * unplaced field error in plain words) and the request id for support. Sits
 * beside the submit button and scrolls itself into view.
 */
export function FormErrors<T extends FieldValues>({ form }: { form: Pick<ApiForm<T>, 'refusal'> }) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDivElement>(null);
  const refusal = form.refusal;
  const placedAll = refusal !== null && refusal.error instanceof LoyaltyError && refusal.error.errors.length > 0 && refusal.unplaced.length === 0;
  useEffect(() => {
    if (refusal && !placedAll) ref.current?.scrollIntoView?.({ block: 'nearest' });
  }, [refusal, placedAll]);
  if (!refusal) return null;
  const requestId = refusal.error instanceof LoyaltyError ? refusal.error.requestId : null;
  return (
    <Alert ref={ref} color="red" variant="light" role="alert" title={placedAll ? t('forms.fixFields') : t('common.error')} data-testid="api-error">
      {!placedAll && refusal.unplaced.length === 0 && <Text size="sm">{errorDetail(refusal.error)}</Text>}
      {refusal.unplaced.map((fieldError) => (
        <Text size="sm" key={`${fieldError.in}${fieldError.path}${fieldError.code}`}>
          {fieldError.path === '/' ? fieldErrorWords(fieldError) : `${fieldError.path.slice(1).replaceAll('/', ' › ')}: ${fieldErrorWords(fieldError)}`}
        </Text>
      ))}
      {requestId && (
        <Text size="xs" c="dimmed" mt={4}>
          {t('forms.requestId', { id: requestId })}
        </Text>
      )}
    </Alert>
  );
}
