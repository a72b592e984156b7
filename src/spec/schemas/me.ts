import { z } from 'zod';
import { Id } from './common.js';

const Named = z.looseObject({ id: Id, name: z.string() });

/** Answer of `GET /me`: who the token belongs to and what it may do. */
export const Me = z.looseObject({
  user: z.looseObject({ id: Id, name: z.string(), email: z.string() }),
  company: Named,
  account: Named,
  /** The token's abilities, e.g. `contacts:read`. */
  abilities: z.array(z.string()),
});
export type Me = z.infer<typeof Me>;
