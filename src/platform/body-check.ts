import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { invalid } from './errors.js';

/**
 * Checks a body that reaches a module's `…InTx` function from another module
 * (a sandbox promotion copying definitions) against the schema its admin route
 * validates with, so that no caller writes what the route would refuse. The
 * refusal is a 400 naming the item and the first problem.
 */
const ajv = new Ajv.default({ allErrors: false, strict: false, coerceTypes: false });
addFormats.default(ajv);

export function bodyChecker(schema: TSchema, what: string): (body: unknown, name: string) => void {
  const validate = ajv.compile(schema);
  return (body, name) => {
    if (validate(body)) return;
    const first = validate.errors![0];
    throw invalid(`${what} ${JSON.stringify(name)}: ${first.instancePath.slice(1) || 'the definition'} ${first.message ?? 'is invalid'}`);
  };
}
