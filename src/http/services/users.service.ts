import { unavailableAs503 } from './conversations.service';
import { randomUUID } from 'node:crypto';
import { isReservedSub } from '../../auth/identity';
import type { RelayService } from '../../relay/relay.service';
import { DuplicateError, type Store, type UserRecord } from '../../store/store';
import { ConflictError, NotFoundError, ValidationError } from '../errors';
import type { PaginationModel } from '../models/envelope.dto';
import type { CreateUserDto, UpdateUserDto, UserDto, UserStatusDto } from '../models/user.dto';
import { paginated, type PageRequest } from './pagination';

export interface UserFilters {
  email?: string;
  q?: string;
}

/**
 * Users of the integrator (their `id` is the JWT `sub`) and their deactivation, which is kept
 * apart from the record: it outlives a deleted user and applies to any `sub`, even one never
 * created here.
 */
export class UsersService {
  constructor(
    private readonly store: Store,
    private readonly relay: RelayService,
  ) {}

  async list(request: PageRequest, filters: UserFilters): Promise<PaginationModel<UserDto>> {
    const { items, total } = await this.store.users.list({ offset: request.offset, limit: request.limit, ...filters });
    return paginated(await Promise.all(items.map((u) => this.toDto(u))), total, request);
  }

  async get(id: string): Promise<UserDto> {
    return this.toDto(await this.require(id));
  }

  async create(body: CreateUserDto): Promise<UserDto> {
    if (body.id !== undefined && isReservedSub(body.id)) {
      throw new ValidationError([{ path: 'body.id', message: '"admin" is reserved' }]);
    }
    const now = new Date().toISOString();
    const record: UserRecord = {
      id: body.id ?? randomUUID(),
      email: body.email,
      name: body.name,
      phone: body.phone ?? null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.store.users.create(record);
    } catch (err) {
      throw conflict(err);
    }
    return this.toDto(record);
  }

  async update(id: string, body: UpdateUserDto): Promise<UserDto> {
    const patch: Partial<Pick<UserRecord, 'email' | 'name' | 'phone'>> = {};
    if (body.email !== undefined) patch.email = body.email;
    if (body.name !== undefined) patch.name = body.name;
    if (body.phone !== undefined) patch.phone = body.phone;
    let updated: UserRecord | null;
    try {
      updated = await this.store.users.update(id, patch);
    } catch (err) {
      throw conflict(err);
    }
    if (!updated) throw notFound(id);
    return this.toDto(updated);
  }

  /** Deletes the record and erases every conversation of `id` with every bot (even without a record). */
  async delete(id: string): Promise<UserDto> {
    await unavailableAs503(() => this.relay.messageLog.deleteUser(id));
    const deleted = await this.store.users.delete(id);
    if (!deleted) throw notFound(id);
    return this.toDto(deleted);
  }

  /** Refuses new handshakes of `id` and ends its live sessions on every replica. */
  async deactivate(id: string): Promise<UserStatusDto> {
    await this.relay.sessions.deactivateUser(id);
    return { id, deactivated: true };
  }

  async activate(id: string): Promise<UserStatusDto> {
    await this.relay.sessions.activateUser(id);
    return { id, deactivated: false };
  }

  private async require(id: string): Promise<UserRecord> {
    const user = await this.store.users.get(id);
    if (!user) throw notFound(id);
    return user;
  }

  private async toDto(user: UserRecord): Promise<UserDto> {
    return {
      id: user.id,
      email: user.email,
      name: user.name,
      ...(user.phone === null ? {} : { phone: user.phone }),
      deactivated: await this.store.deactivations.isDeactivated(user.id),
      createdAt: new Date(user.createdAt),
      updatedAt: new Date(user.updatedAt),
    };
  }
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No user with id "${id}".`);
}

function conflict(err: unknown): unknown {
  if (!(err instanceof DuplicateError)) return err;
  return err.field === 'email'
    ? new ConflictError('EMAIL_TAKEN', 'A user with this email already exists.')
    : new ConflictError('ID_TAKEN', 'A user with this id already exists.');
}
