/**
 * Compile-time checks that keep two definitions of one thing in step (a schema and its wire type,
 * a list and its catalogue): `Assert<Same<A, B>>` fails the build unless A and B are the same type.
 * Types only; nothing here exists at run time.
 */
export type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Assert<T extends true> = T;
