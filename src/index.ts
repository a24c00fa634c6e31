/** Package entry: the hub factory and configuration, the agent SDK, and the protocol types. */
export { createHub, type Hub, type HubDeps } from './hub/hub';
export { loadConfig, configFrom, ConfigError, type HubConfig } from './config/config';
export { RelayAgent, RelayAgentError, type RelayAgentOptions, type MessageHandler } from './sdk/agent';
export * from './protocol';
/** Typed REST client generated from the OpenAPI spec: one function per operationId (`getUsers`, …). */
export * as restClient from './client';
export { createClient as createRestClient, type Client as RestClient } from './client/client';
