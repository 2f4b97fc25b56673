// A channel's messages decoded the way Foxglove decodes them, from nothing but the
// channel's own schema: protobuf through the FileDescriptorSet the schema carries
// (@mcap/support's protobufFromBinaryDescriptor, as Foxglove's MCAP loader does), JSON
// validated against its JSON Schema (Ajv). A message the schema does not describe throws.

"use strict";

const { protobufFromBinaryDescriptor } = require("@mcap/support");
const Ajv = require("ajv");

const ajv = new Ajv({ allErrors: true, strict: true });
const text = new TextDecoder("utf-8", { fatal: true });

/** The bytes of a schema given as text (the WebSocket protocol) or bytes (MCAP). */
function bytes(data) {
  return typeof data === "string" ? new TextEncoder().encode(data) : data;
}

/**
 * A function from a message's bytes to a plain object, for a channel whose schema is
 * `schemaName` in `schemaEncoding` (`protobuf` or `jsonschema`) and whose messages are in
 * `messageEncoding`. 64-bit integers come as decimal strings: nothing is rounded.
 */
function decoderFor({ messageEncoding, schemaEncoding, schemaName, schema }) {
  if (messageEncoding === "protobuf" && schemaEncoding === "protobuf") {
    const type = protobufFromBinaryDescriptor(bytes(schema)).lookupType(schemaName);
    return (data) => {
      const message = type.decode(data);
      return type.toObject(message, { longs: String, enums: String, defaults: true });
    };
  }
  if (messageEncoding === "json" && schemaEncoding === "jsonschema") {
    const schemaText = typeof schema === "string" ? schema : text.decode(schema);
    const validate = ajv.compile(JSON.parse(schemaText));
    return (data) => {
      const message = JSON.parse(text.decode(data));
      if (!validate(message)) {
        throw new Error(`${schemaName}: ${ajv.errorsText(validate.errors)}`);
      }
      return message;
    };
  }
  throw new Error(
    `no decoder for ${messageEncoding} messages with a ${schemaEncoding} schema (${schemaName})`,
  );
}

module.exports = { decoderFor };
