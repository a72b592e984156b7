/**
 * The type a value has after a JSON round trip (`JSON.parse(JSON.stringify(v))`),
 * which is what `ctx.step` returns: a `Date` (or anything with `toJSON`)
 * becomes what `toJSON` returns, properties holding `undefined`, a function or
 * a symbol are dropped (optional when they only may hold one), such array
 * items become `null`, symbol keys are dropped, and a Map or Set becomes `{}`.
 * `NaN` and `Infinity` (which become `null`) cannot be told apart from other
 * numbers by type.
 */
export type Jsonified<T> = 0 extends 1 & T
  ? T // `any` stays `any` (T is `any` here)
  : unknown extends T
    ? unknown
    : T extends { toJSON(...args: never[]): infer R }
      ? Jsonified<R>
      : T extends string | number | boolean | null
        ? T
        : T extends Dropped
          ? undefined
          : T extends bigint
            ? never // JSON.stringify throws on a bigint
            : T extends ReadonlyMap<unknown, unknown> | ReadonlySet<unknown>
              ? Record<string, never>
              : T extends readonly unknown[]
                ? { -readonly [I in keyof T]: JsonifiedItem<T[I]> }
                : T extends object
                  ? JsonifiedObject<T>
                  : never;

/** What JSON.stringify leaves out of an object (and turns into `null` in an array). */
type Dropped = undefined | void | symbol | ((...args: never[]) => unknown);

/** An array item: one JSON drops becomes `null` (distributes over a union). */
type JsonifiedItem<E> = E extends Dropped ? null : Jsonified<E>;

/** Keys kept in JSON: strings, and numbers (written as strings). */
type JsonKey<K> = K extends string ? K : K extends number ? `${K}` : never;

/**
 * Homomorphic (`keyof T` with `as`), so an index signature does not swallow
 * the known keys. A key whose value may be dropped becomes optional; one whose
 * value is always dropped goes.
 */
type JsonifiedObject<T> = Flatten<
  { -readonly [K in keyof T as [Extract<T[K], Dropped>] extends [never] ? JsonKey<K> : never]: Jsonified<T[K]> } & {
    -readonly [
      K in keyof T as [Extract<T[K], Dropped>] extends [never] ? never : [Exclude<T[K], Dropped>] extends [never] ? never : JsonKey<K>
    ]+?: Jsonified<Exclude<T[K], Dropped>>;
  }
>;

type Flatten<T> = { [K in keyof T]: T[K] } & {};
