/**
 * Stack traces of a deployed bundle, mapped to source lines when they are first formatted.
 *
 * `--enable-source-maps` reads and parses the bundle's map as the bundle loads: 14 to 19 ms of
 * every init (README, "Cold start"), for traces most environments never print. Injected into
 * each bundle (and only there: tests running the TypeScript keep their own mapping), this hook
 * reads the map the first time a stack is formatted, and then maps every frame of the bundle to
 * its source file, line, column and function name, as Node's own support does.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceOrigin } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The bundle's own URL: every module of it shares the one file. */
const bundle = import.meta.url;
const nodeDefault = Error.prepareStackTrace;

let map: SourceMap | null | undefined;
const sourceMap = (): SourceMap | null => {
  if (map === undefined) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${fileURLToPath(bundle)}.map`, 'utf8')));
    } catch {
      // No readable map beside the bundle: its frames print unmapped. Formatting a stack must
      // never throw, or the error being reported would be lost behind this one.
      map = null;
    }
  }
  return map;
};

/** `../../shared/ingest.ts` → `shared/ingest.ts`: sources are relative to the map. */
const tidy = (source: string) => source.replace(/^(?:\.\.?\/)+/, '');

/** The name an entry of the map gives the source at a 1-indexed position of the bundle. */
const nameAt = (sm: SourceMap, line: number | null, column: number | null) => {
  const entry = line && column ? sm.findEntry(line - 1, column - 1) : {};
  return 'name' in entry && typeof entry.name === 'string' ? entry.name : undefined;
};

const isOrigin = (found: SourceOrigin | object): found is SourceOrigin => 'fileName' in found;

/**
 * One frame, mapped when it is in the bundle. Its function is named as the source named it:
 * the name at the start of the enclosing function, or else the name its caller called it by
 * (the bundle's own names are minified).
 */
const frame = (site: NodeJS.CallSite, caller: NodeJS.CallSite | undefined): string => {
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  const sm = site.getFileName() === bundle ? sourceMap() : null;
  if (!sm || !line || !column) return String(site);
  const origin = sm.findOrigin(line, column);
  if (!isOrigin(origin)) return String(site);
  const location = `${tidy(origin.fileName)}:${origin.lineNumber}:${origin.columnNumber}`;
  const name =
    nameAt(sm, site.getEnclosingLineNumber(), site.getEnclosingColumnNumber()) ??
    (caller?.getFileName() === bundle
      ? nameAt(sm, caller.getLineNumber(), caller.getColumnNumber())
      : undefined);
  if (!name) return String(site).replace(`${bundle}:${line}:${column}`, location);
  const prefix = site.isAsync() ? 'async ' : site.isConstructor() ? 'new ' : '';
  return `${prefix}${name} (${location})`;
};

Error.prepareStackTrace = (error, sites) => {
  // Node's default with no frames gives the header alone ("Name: message"), as it would print it.
  const header = nodeDefault ? String(nodeDefault(error, [])) : String(error);
  return header + sites.map((site, i) => `\n    at ${frame(site, sites[i + 1])}`).join('');
};
