/** Served by the console build's plugin (request-rules.mjs): the limits of each request body field, from the service's OpenAPI document. */
declare module 'virtual:request-rules' {
  const rules: Record<string, Record<string, import('./lib/forms').FieldRule>>;
  export default rules;
}
