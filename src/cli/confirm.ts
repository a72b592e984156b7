import { createInterface } from 'node:readline';
import type { CliIo } from './command.js';

/**
 * Asks `question` on the terminal and resolves true for y/yes. Null when nobody can answer (stdin is not a
 * terminal): the caller refuses unless told `--yes`.
 */
export async function confirm(io: CliIo, question: string): Promise<boolean | null> {
  if ((io.stdin as { isTTY?: boolean }).isTTY !== true) return null;
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once('close', () => resolve(''));
      rl.question(question, resolve);
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}
