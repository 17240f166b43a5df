let port;
export function initialize(data) {
  port = data.port;
}
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  port.postMessage(result.url);
  return result;
}
