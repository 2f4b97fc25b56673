//! Whatever a client sends, decoding never panics, and what decodes re-encodes to exactly
//! the bytes it came from (every client package layout is exact), in both protocol versions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtde_core::protocol::{ClientMessage, Frame, ProtocolVersion};

fuzz_target!(|data: &[u8]| {
    let Ok(Some((frame, used))) = Frame::parse(data) else { return };
    for version in [ProtocolVersion::V1, ProtocolVersion::V2] {
        let Ok(msg) = ClientMessage::decode(frame, version) else { continue };
        let mut buf = vec![0u8; msg.encoded_len(version).expect("a decoded message encodes")];
        let n = msg.encode(version, &mut buf).expect("a decoded message encodes");
        assert_eq!(&buf[..n], &data[..used]);
    }
});
