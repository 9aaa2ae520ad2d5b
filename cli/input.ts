/**
 * The bodies a command reads from a file or stdin (`send`, `validate`, `invoke`): no AWS client
 * here, so a command that needs no stack loads none.
 */
import { readFileSync } from 'node:fs';
import { CliError } from './target.ts';

const FILE_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
};

/** The lines to send, from a file or stdin; a file that cannot be read is named, with why. */
export const readInput = (file: string): string => {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    const code = 'code' in error && typeof error.code === 'string' ? error.code : '';
    const why = FILE_ERRORS[code] ?? error.message;
    throw new CliError(`cannot read ${file === '-' ? 'stdin' : file}: ${why}`, { cause: error });
  }
};

/**
 * The message bodies of NDJSON text, blank lines left out, and each one's line in the text (what
 * a report names, so that it points at the file's line even past blank ones).
 */
export const bodyLines = (text: string): { bodies: string[]; lineOf: number[] } => {
  const bodies: string[] = [];
  const lineOf: number[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    bodies.push(line);
    lineOf.push(i + 1);
  }
  return { bodies, lineOf };
};
