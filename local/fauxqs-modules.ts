/**
 * fauxqs's own modules, by the URL fauxqs itself imports them by, so the instances are the ones
 * its server uses: the stores made for it (`fauxqs-store.ts`) and the gap-fillers that change its
 * checks and queues (`sqs-unicode.ts`, `sqs-fifo-receive.ts`). The package is found from its
 * `package.json` rather than with `import.meta.resolve`, which Vite's module runner (the test
 * runner's global set-up) does not offer: the suite's own emulators then get the same fauxqs as
 * `npm start`.
 */
import { findPackageJSON } from 'node:module';
import { pathToFileURL } from 'node:url';

/** A module of the installed fauxqs, by its path in the package (`./dist/sqs/sqsStore.js`). */
export const fauxqsModule = async <T>(path: string): Promise<T> => {
  const packageJson = findPackageJSON('fauxqs', import.meta.url);
  if (packageJson === undefined) throw new Error('fauxqs is not installed');
  return (await import(new URL(path, pathToFileURL(packageJson)).href)) as T;
};
