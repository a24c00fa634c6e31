import {
  Body,
  Controller,
  Delete,
  Get,
  OperationId,
  Path,
  Post,
  Put,
  Query,
  Response,
  Route,
  Security,
  SuccessResponse,
  Tags,
} from '@tsoa/runtime';
import type { HttpServices } from '../http-services';
import type { PaginationModel, SingleModel } from '../models/envelope.dto';
import type { ProblemDto } from '../models/problem.dto';
import type { CreateUserDto, UpdateUserDto, UserDto, UserStatusDto } from '../models/user.dto';
import { pageRequest, single } from '../services/pagination';

/** Users of the integrator; `id` is the JWT `sub` of their chat tokens. ADMIN only. */
@Route('users')
@Tags('Users')
@Security('defaultBearerAuth', ['ADMIN'])
@Response<ProblemDto>(401, 'Missing, invalid or expired token', undefined, 'application/problem+json')
@Response<ProblemDto>(403, 'The token is not ADMIN, or its user is deactivated', undefined, 'application/problem+json')
@Response<ProblemDto>(429, 'Too many failed authentications from this address; see Retry-After', undefined, 'application/problem+json')
export class UsersController extends Controller {
  constructor(private readonly services: HttpServices) {
    super();
  }

  /**
   * Lists users oldest first, a page at a time.
   * @summary List users
   * @param page 1-based page number, at most 10000000.
   * @param perPage Page size, 1–100.
   * @param email Exact email, case-insensitive.
   * @param q Case-insensitive substring of id, email or name.
   * @isInt page
   * @minimum page 1
   * @maximum page 10000000
   * @isInt perPage
   * @minimum perPage 1
   * @maximum perPage 100
   */
  @Get()
  @OperationId('getUsers')
  @Response<ProblemDto>(400, 'Invalid paging or filter', undefined, 'application/problem+json')
  public async getUsers(
    @Query() page?: number,
    @Query() perPage?: number,
    @Query() email?: string,
    @Query() q?: string,
  ): Promise<PaginationModel<UserDto>> {
    return this.services.users.list(pageRequest(page, perPage), { email, q });
  }

  /**
   * One user by id.
   * @summary Get a user
   */
  @Get('{id}')
  @OperationId('getUserById')
  @Response<ProblemDto>(404, 'No such user', undefined, 'application/problem+json')
  public async getUserById(@Path() id: string): Promise<SingleModel<UserDto>> {
    return single(await this.services.users.get(id));
  }

  /**
   * Creates a user. `id` is the integrator's user id (generated when absent).
   * @summary Create a user
   */
  @Post()
  @OperationId('createUser')
  @SuccessResponse(201, 'Created')
  @Response<ProblemDto>(400, 'Invalid body, or id "admin" (in any case, spaces around it too)', undefined, 'application/problem+json')
  @Response<ProblemDto>(409, 'A user with this id or email exists', undefined, 'application/problem+json')
  @Response<ProblemDto>(413, 'Body larger than REST_BODY_LIMIT_BYTES', undefined, 'application/problem+json')
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  public async createUser(@Body() body: CreateUserDto): Promise<SingleModel<UserDto>> {
    return single(await this.services.users.create(body));
  }

  /**
   * Changes any of email, name, phone (`null` clears the phone).
   * @summary Update a user
   */
  @Put('{id}')
  @OperationId('updateUser')
  @Response<ProblemDto>(400, 'Invalid body', undefined, 'application/problem+json')
  @Response<ProblemDto>(404, 'No such user', undefined, 'application/problem+json')
  @Response<ProblemDto>(409, 'Another user has this email', undefined, 'application/problem+json')
  @Response<ProblemDto>(413, 'Body larger than REST_BODY_LIMIT_BYTES', undefined, 'application/problem+json')
  @Response<ProblemDto>(415, 'Body is not JSON', undefined, 'application/problem+json')
  public async updateUser(@Path() id: string, @Body() body: UpdateUserDto): Promise<SingleModel<UserDto>> {
    return single(await this.services.users.update(id, body));
  }

  /**
   * Deletes the record and returns it, and erases every conversation of this `sub` with every bot
   * (those are erased even when no record exists, which is a 404). A deactivation of the id stays in force.
   * @summary Delete a user
   */
  @Delete('{id}')
  @OperationId('deleteUser')
  @Response<ProblemDto>(404, 'No such user', undefined, 'application/problem+json')
  @Response<ProblemDto>(503, 'The conversation log is unreachable; nothing was deleted', undefined, 'application/problem+json')
  public async deleteUser(@Path() id: string): Promise<SingleModel<UserDto>> {
    return single(await this.services.users.delete(id));
  }

  /**
   * Lets the subject open chat sessions again.
   * @summary Activate a user
   */
  @Post('{id}/activate')
  @OperationId('activateUser')
  public async activateUser(@Path() id: string): Promise<SingleModel<UserStatusDto>> {
    return single(await this.services.users.activate(id));
  }

  /**
   * Ends the subject's chat sessions on every replica (`session:closed` `USER_DEACTIVATED`) and
   * refuses its new handshakes. Works for any `sub`, created here or not.
   * @summary Deactivate a user
   */
  @Post('{id}/deactivate')
  @OperationId('deactivateUser')
  public async deactivateUser(@Path() id: string): Promise<SingleModel<UserStatusDto>> {
    return single(await this.services.users.deactivate(id));
  }
}
