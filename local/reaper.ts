/**
 * Parent-death guard for a child process of the local runtime (DynamoDB Local's JVM):
 * `node reaper.ts <pid> [dir]` with its stdin a pipe from the runtime. When that pipe closes, the
 * runtime is gone, however it died (`kill -9` included, where no exit handler runs), and the
 * reaper kills the child and removes `dir`, the child's temporary directory. It exits by itself
 * once the child is gone.
 */
import { rmSync } from 'node:fs';

const pid = Number(process.argv[2]);
const scratch = process.argv[3];
if (!Number.isInteger(pid) || pid <= 0) process.exit(2);

const alive = () => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const reap = () => {
  if (alive()) process.kill(pid, 'SIGKILL');
  // A file the killed JVM still maps can be unlinked all the same.
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
};
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
process.stdin.resume();
setInterval(() => {
  if (!alive()) process.exit(0);
}, 1000);
