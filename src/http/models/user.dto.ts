/**
 * An integrator's user id, which is the JWT `sub` of that user's chat tokens. `admin` is reserved,
 * in any case and with or without spaces around it.
 * @minLength 1
 * @maxLength 128
 * @example "<user_id>"
 */
export type UserId = string;

/**
 * An email address, unique among users (case-insensitive).
 * @pattern ^[^\s@]+@[^\s@]+\.[^\s@]+$
 * @maxLength 254
 * @example "user@example.com"
 */
export type Email = string;

/** A user as returned by the API. */
export interface UserDto {
  id: UserId;
  email: Email;
  /** @example "<NAME>" */
  name: string;
  /** @example "<PHONE>" */
  phone?: string;
  /**
   * `true` while the user is deactivated: their chat sessions are refused.
   * @example false
   */
  deactivated: boolean;
  /** @example "2025-01-15T09:30:00.000Z" */
  createdAt: Date;
  /** @example "2025-01-15T09:30:00.000Z" */
  updatedAt: Date;
}

/** Body of `createUser`; `id` is generated when absent. */
export interface CreateUserDto {
  id?: UserId;
  email: Email;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "<NAME>"
   */
  name: string;
  /**
   * @minLength 1
   * @maxLength 40
   * @example "<PHONE>"
   */
  phone?: string;
}

/** Body of `updateUser`: any subset of the fields; `phone: null` clears the phone. */
export interface UpdateUserDto {
  email?: Email;
  /**
   * @minLength 1
   * @maxLength 200
   * @example "<NAME>"
   */
  name?: string;
  /**
   * @minLength 1
   * @maxLength 40
   * @example "<PHONE>"
   */
  phone?: string | null;
}

/** Whether a subject may open chat sessions, after `activateUser` / `deactivateUser`. */
export interface UserStatusDto {
  id: UserId;
  /** @example true */
  deactivated: boolean;
}
