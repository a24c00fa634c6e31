import { Type, type Static } from '@sinclair/typebox';
import { ControlStates } from './names';
import type { OperatorName } from './payloads';
import type { Assert, Same } from './type-checks';

/** Pieces of the handoff payloads (docs/handoff.md) that the message schemas share. */

/** Who answers a conversation. */
export const ControlStateSchema = Type.Union(
  [Type.Literal(ControlStates.bot), Type.Literal(ControlStates.waiting), Type.Literal(ControlStates.human)],
  { title: 'ControlState', description: "'bot' answers; 'waiting': the bot asked for a person; 'human': an operator holds it." },
);

/** An operator as users see them. */
export const OperatorNameSchema = Type.Object(
  { name: Type.String({ description: "The operator token's name claim, else its sub." }) },
  { title: 'OperatorName' },
);

export type ControlSchemasMatchProtocol = [Assert<Same<Static<typeof OperatorNameSchema>, OperatorName>>];
