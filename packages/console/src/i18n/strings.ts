/**
 * The shape of a translation: the same keys as the English strings, each a
 * string. `const de: Translation<typeof en> = …` fails the typecheck when a
 * key is missing or misspelt, so no language falls behind English unnoticed.
 */
export type Translation<T> = { [K in keyof T]: T[K] extends string ? string : Translation<T[K]> };
