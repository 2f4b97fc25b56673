"""Reads an rtde MCAP recording as PlotJuggler and Rerun do: with the `mcap` package and
its protobuf decoder, which builds the message classes from the descriptor in the file.

Prints one line per record for tests/python_mcap.rs to check:
  meta KEY VALUE                         the `rtde` metadata record
  out LOG_TIME PUBLISH_TIME JSON         a recipe message, its fields by name
  gap LOG_TIME JSON                      a gap message (JSON on the wire)
"""

import json
import sys

from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory


def main(path):
    with open(path, "rb") as f:
        reader = make_reader(f)
        for record in reader.iter_metadata():
            if record.name == "rtde":
                for key, value in sorted(record.metadata.items()):
                    print("meta", key, value)
        factory = DecoderFactory()
        # In file order: the unpaced simulator of the test runs its clock faster than the
        # host's, so the two connections' log times interleave.
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            if channel.topic == "/rtde/outputs":
                decode = factory.decoder_for(channel.message_encoding, schema)
                decoded = decode(message.data)
                fields = {}
                for field in decoded.DESCRIPTOR.fields:
                    value = getattr(decoded, field.name)
                    if not isinstance(value, (bool, int, float)):
                        value = list(value)  # a repeated field
                    fields[field.name] = value
                print("out", message.log_time, message.publish_time, json.dumps(fields))
            elif channel.topic == "/rtde/gaps":
                print("gap", message.log_time, json.dumps(json.loads(message.data)))


if __name__ == "__main__":
    main(sys.argv[1])
