import fs from 'node:fs';
import path from 'node:path';

/**
 * The repository's root folder. `npm test` runs the tests from a compiled copy of the repository
 * (scripts/test-build.ts) whose package.json is a link to this one's; a test that reads or walks
 * the sources starts here, not from its own folder.
 */
export const repositoryRoot = path.dirname(fs.realpathSync(path.resolve(import.meta.dirname, '../package.json')));
