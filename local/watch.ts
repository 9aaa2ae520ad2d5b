/**
 * `npm start -- --watch`: the running stack follows its sources. A change under the project's
 * sources synthesizes the app again (the same `cdk synth` as at start, so the same bundling), and
 * the runtime swaps in the functions' new code and settings (`LocalRuntime.update`), keeping its
 * queues, tables, buckets and everything in them. With a cloud assembly given instead of the
 * project, a new synthesis written there by someone else (its `manifest.json` rewritten) is
 * taken the same way.
 *
 * Changes that come while a synthesis runs are taken by one more synthesis right after it, so
 * the stack always ends on the sources as last saved, and a burst of saves (an editor writing
 * several files, a `git checkout`) costs one synthesis.
 */
import { type FSWatcher, watch } from 'node:fs';
import { join, relative } from 'node:path';
import type { LocalRuntime, StackUpdate } from './runtime.ts';

/** What the watcher did, as it happens (for the terminal). */
export type WatchEvent =
  | { readonly kind: 'synthesizing'; readonly changed: readonly string[] }
  /** Saved while a synthesis runs: one more follows it. */
  | { readonly kind: 'pending'; readonly changed: readonly string[] }
  | { readonly kind: 'synth-failed'; readonly error: Error }
  | { readonly kind: 'updated'; readonly update: StackUpdate; readonly ms: number }
  | { readonly kind: 'update-failed'; readonly error: Error }
  /** The system stopped telling of changes (out of inotify watches, say): nothing more is taken. */
  | { readonly kind: 'watch-failed'; readonly error: Error };

export interface WatchOptions {
  /** The cloud assembly the runtime runs, and where a synthesis writes. */
  readonly assemblyDir: string;
  /**
   * The project to synthesize on a change of its sources (files or folders, relative to `dir`);
   * without it, the assembly itself is watched.
   */
  readonly project?: {
    readonly dir: string;
    readonly sources: readonly string[];
    synthesize(): Promise<void>;
  };
  readonly runtime: Pick<LocalRuntime, 'update'>;
  readonly report: (event: WatchEvent) => void;
  /** Quiet time after the last change before acting. Default 200 ms. */
  readonly debounceMs?: number;
}

/** What a build takes: code, data and configuration, not editors' swap and backup files. */
const SOURCE_FILE = /\.(?:[cm]?[jt]s|json)$/;

export const watchStack = (o: WatchOptions): { close(): void } => {
  const watchers: FSWatcher[] = [];
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let closed = false;

  const rebuild = async () => {
    if (closed || changed.size === 0) return;
    if (running) {
      o.report({ kind: 'pending', changed: [...changed].sort() });
      return;
    }
    running = true;
    const files = [...changed].sort();
    changed.clear();
    try {
      if (o.project) {
        o.report({ kind: 'synthesizing', changed: files });
        try {
          await o.project.synthesize();
        } catch (error) {
          o.report({ kind: 'synth-failed', error: error as Error });
          return;
        }
      }
      const started = Date.now();
      try {
        const update = await o.runtime.update(o.assemblyDir);
        o.report({ kind: 'updated', update, ms: Date.now() - started });
      } catch (error) {
        o.report({ kind: 'update-failed', error: error as Error });
      }
    } finally {
      running = false;
      // Saved meanwhile: build again, on the latest sources.
      if (changed.size > 0) void rebuild();
    }
  };
  const noticed = (file: string) => {
    if (closed) return;
    changed.add(file);
    clearTimeout(timer);
    timer = setTimeout(() => void rebuild(), o.debounceMs ?? 200);
  };

  if (o.project) {
    const { dir, sources } = o.project;
    const files = new Set(sources.filter((s) => SOURCE_FILE.test(s)));
    // Folders recursively; single files through their folder, since editors often save by
    // writing a new file and renaming it over the old one, which ends a watch on the file.
    for (const source of sources.filter((s) => !files.has(s)))
      watchers.push(
        watch(join(dir, source), { recursive: true }, (_event, name) => {
          if (name && SOURCE_FILE.test(name)) noticed(join(source, name));
        }),
      );
    if (files.size > 0)
      watchers.push(
        watch(dir, (_event, name) => {
          if (name && files.has(name)) noticed(name);
        }),
      );
  } else {
    watchers.push(
      watch(o.assemblyDir, (_event, name) => {
        if (name === 'manifest.json') noticed(relative(process.cwd(), join(o.assemblyDir, name)));
      }),
    );
  }
  for (const w of watchers)
    w.on('error', (error) => {
      if (closed) return;
      closed = true;
      for (const other of watchers) other.close();
      o.report({ kind: 'watch-failed', error });
    });
  return {
    close: () => {
      closed = true;
      clearTimeout(timer);
      for (const w of watchers) w.close();
    },
  };
};

/**
 * What to show of a failed synthesis: esbuild's errors (each a `✘ [ERROR]` line and its indented
 * source frame) when there are any, else the end of the output.
 */
const failureLines = (text: string, lines = 20): string => {
  const all = text.trimEnd().split('\n');
  const first = all.findIndex((line) => line.startsWith('✘ [ERROR]'));
  if (first < 0) return all.slice(-lines).join('\n');
  const end = all.findIndex(
    (line, i) => i > first && line !== '' && !/^\s/.test(line) && !line.startsWith('✘'),
  );
  return all
    .slice(first, end < 0 ? undefined : end)
    .slice(0, lines)
    .join('\n')
    .trimEnd();
};

/** What the terminal shows of a watch event. */
export const describeWatchEvent = (event: WatchEvent): string => {
  switch (event.kind) {
    case 'synthesizing': {
      const shown = event.changed.slice(0, 3).join(', ');
      const more = event.changed.length > 3 ? ` and ${event.changed.length - 3} more` : '';
      return `▸ ${shown}${more} changed: synthesizing…`;
    }
    case 'pending':
      return `  ${event.changed.join(', ')} saved meanwhile: synthesizing again after this one`;
    case 'synth-failed':
      return `✘ the synthesis failed; the functions keep the code they run:\n${failureLines(event.error.message)}`;
    case 'watch-failed':
      return `✘ watching stopped (${event.error.message}); the stack runs on with the code it has`;
    case 'update-failed':
      return `✘ the new synthesis cannot run; the functions keep the code they run: ${event.error.message}`;
    case 'updated': {
      const { updated, restartNeeded, mappings } = event.update;
      const names = updated.map((fn) => fn.logicalId).join(', ');
      const lines = [
        updated.length === 0
          ? '  no function changed'
          : `  ${names} updated in ${event.ms} ms: invocations from now on run the new code in fresh environments`,
        ...mappings.map((line) => `${line.includes(' not updated: ') ? '!' : ' '} trigger ${line}`),
      ];
      if (restartNeeded.length > 0)
        lines.push(`! not applied until npm start runs again: ${restartNeeded.join('; ')}`);
      return lines.join('\n');
    }
  }
};
