//! Whatever a controller sends, decoding never panics, and what decodes re-encodes to bytes
//! that decode to the same message, in both protocol versions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_core::protocol::{ControllerMessage, Frame, ProtocolVersion};

fuzz_target!(|data: &[u8]| {
    let Ok(Some((frame, _))) = Frame::parse(data) else {
        return;
    };
    for version in [ProtocolVersion::V1, ProtocolVersion::V2] {
        let Ok(msg) = ControllerMessage::decode(frame, version) else {
            continue;
        };
        let mut buf = vec![0u8; msg.encoded_len(version).expect("a decoded message encodes")];
        let n = msg
            .encode(version, &mut buf)
            .expect("a decoded message encodes");
        assert_eq!(n, buf.len());
        let (again, used) = Frame::parse(&buf).unwrap().unwrap();
        assert_eq!(used, n);
        assert_eq!(ControllerMessage::decode(again, version).unwrap(), msg);
    }
});
