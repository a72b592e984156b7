import { z } from 'zod';

/** ISO 8601 timestamp with an offset, kept as the string the service sent. */
export const Timestamp = z.string();
/** Money in responses: a string with two decimals, never converted to a float. */
export const DecimalString = z.string().regex(/^-?\d+\.\d{2}$/, 'expected a decimal string with two decimals');
export const Id = z.number().int();

/** `{data: T}` wrapper of single-record answers. */
export const single = <T extends z.ZodType>(schema: T) => z.looseObject({ data: schema });
/** `{data: T[], meta: {next_cursor, per_page}}` wrapper of collection answers. */
export const page = <T extends z.ZodType>(schema: T) =>
  z.looseObject({
    data: z.array(schema),
    meta: z.looseObject({ next_cursor: z.string().nullable(), per_page: z.number().int() }),
  });
