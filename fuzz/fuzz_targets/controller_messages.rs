//! Whatever a controller sends, decoding never panics, and what decodes re-encodes to bytes
//! that decode and encode again to the same bytes, in both protocol versions. (Bytes, not
//! messages, are compared: a NaN frequency is not equal to itself.)
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_core::protocol::{ControllerMessage, Frame, ProtocolVersion};

fuzz_target!(|data: &[u8]| {
    let Ok(Some((frame, _))) = Frame::parse(data) else { return };
    for version in [ProtocolVersion::V1, ProtocolVersion::V2] {
        let Ok(msg) = ControllerMessage::decode(frame, version) else { continue };
        let first = encode(&msg, version);
        let (again, used) = Frame::parse(&first).unwrap().unwrap();
        assert_eq!(used, first.len());
        let second = encode(&ControllerMessage::decode(again, version).unwrap(), version);
        assert_eq!(first, second);
    }
});

fn encode(msg: &ControllerMessage<'_>, version: ProtocolVersion) -> Vec<u8> {
    let mut buf = vec![0u8; msg.encoded_len(version).expect("a decoded message encodes")];
    let n = msg.encode(version, &mut buf).expect("a decoded message encodes");
    assert_eq!(n, buf.len());
    buf
}
