"""Reads an rtde MCAP recording as PlotJuggler and Rerun do: with the `mcap` package and
its protobuf decoder, which builds the message classes from the descriptor in the file.

Prints one line per record for tests/python_mcap.rs to check:
  meta KEY VALUE                         the `rtde` metadata record
  channel TOPIC SCHEMA SCHEMA_ENCODING MESSAGE_ENCODING   each channel
  out LOG_TIME PUBLISH_TIME JSON         a recipe message, its fields by name
  gap LOG_TIME JSON                      a gap message (`rtde.Gap`)
  tf LOG_TIME PUBLISH_TIME JSON          the link frames (`foxglove.FrameTransforms`)
  pose LOG_TIME PUBLISH_TIME JSON        the TCP pose (`foxglove.PoseInFrame`)
  modes LOG_TIME PUBLISH_TIME JSON       the modes (`rtde.Modes`)
Every message is decoded by the protobuf decoder, each field read by its name in the
file's descriptor (Foxglove's names for /tf and /tcp_pose).
"""

import json
import sys

from mcap.reader import make_reader
from mcap_protobuf.decoder import DecoderFactory


def xyz(v, names="xyz"):
    return [getattr(v, n) for n in names]


def stamp(t):
    return [t.seconds, t.nanos]


def frames(m):
    return [
        {
            "timestamp": stamp(t.timestamp),
            "parent": t.parent_frame_id,
            "child": t.child_frame_id,
            "translation": xyz(t.translation),
            "rotation": xyz(t.rotation, "xyzw"),
        }
        for t in m.transforms
    ]


def pose(m):
    return {
        "timestamp": stamp(m.timestamp),
        "frame_id": m.frame_id,
        "position": xyz(m.pose.position),
        "orientation": xyz(m.pose.orientation, "xyzw"),
    }


def main(path):
    with open(path, "rb") as f:
        reader = make_reader(f)
        for record in reader.iter_metadata():
            if record.name == "rtde":
                for key, value in sorted(record.metadata.items()):
                    print("meta", key, value)
        summary = reader.get_summary()
        for channel in sorted(summary.channels.values(), key=lambda c: c.topic):
            schema = summary.schemas[channel.schema_id]
            print("channel", channel.topic, schema.name, schema.encoding, channel.message_encoding)
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
                continue
            decoded = factory.decoder_for(channel.message_encoding, schema)(message.data)
            times = f"{message.log_time} {message.publish_time}"
            if channel.topic == "/rtde/gaps":
                gap = {k: getattr(decoded, k) for k in ("kind", "packages", "after", "before")}
                print("gap", message.log_time, json.dumps(gap))
            elif channel.topic == "/tf":
                print("tf", times, json.dumps(frames(decoded)))
            elif channel.topic == "/tcp_pose":
                print("pose", times, json.dumps(pose(decoded)))
            elif channel.topic == "/rtde/modes":
                modes = {"robot_mode": decoded.robot_mode, "safety_mode": decoded.safety_mode}
                print("modes", times, json.dumps(modes))
            else:
                raise SystemExit(f"unexpected topic {channel.topic}")


if __name__ == "__main__":
    main(sys.argv[1])
