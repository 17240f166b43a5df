export interface ConsoleBuild {
  /** File name of the script (content-hashed). */
  script: string;
  /** File name of the stylesheet (content-hashed). */
  stylesheet: string;
  files: Array<{ name: string; contents: Uint8Array }>;
}
export function buildConsole(options?: { minify?: boolean }): Promise<ConsoleBuild>;
/** Builds the console into `dir`, with manifest.json naming its script and stylesheet. */
export function writeConsole(dir: string): Promise<void>;
