/**
 * The entry points run the project's TypeScript, which needs Node.js 24 (the Lambda runtime's
 * major, pinned as a dev dependency). Started by an older global `node` (a direct
 * `./cli/onceflow.mjs`), they would fail on a missing export with a SyntaxError that names
 * neither the cause nor the fix; this says both instead.
 */
export const requireNode24 = (command) => {
  const major = Number(process.versions.node.split('.')[0]);
  if (major >= 24) return;
  process.stderr.write(
    `${command} needs Node.js 24 or newer, and this is v${process.versions.node}: ` +
      "run it through npm (npx onceflow …, npm start), which uses the project's own Node 24.\n",
  );
  process.exit(1);
};
