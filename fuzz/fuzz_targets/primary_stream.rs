//! A primary interface byte stream split at arbitrary points decodes to the same packages
//! (or the same error) as the stream decoded in one piece, and never panics; the
//! real-time decoder never panics on any bytes either.
#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use pieces::pieces;
use rtde_robot_proto::primary::{Decoded, Decoder};
use rtde_robot_proto::realtime::RealtimeState;

/// A package as a comparable value.
fn owned(decoded: Decoded<'_>) -> String {
    format!("{decoded:?}")
}

fuzz_target!(|input: (Vec<u8>, Vec<u16>)| {
    let (stream, splits) = input;

    // Reference: the whole stream at once.
    let mut reference = Decoder::new();
    let mut expected = Vec::new();
    let mut rest = &stream[..];
    let expected_error = loop {
        match reference.decode(rest) {
            Ok(Some((decoded, used))) => {
                expected.push(owned(decoded));
                rest = &rest[used..];
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };

    // The same stream through the decoder's own buffer, in chunks.
    let mut decoder = Decoder::new();
    let mut got = Vec::new();
    let mut got_error = None;
    'outer: for chunk in pieces(&stream, &splits) {
        let mut offset = 0;
        while offset < chunk.len() {
            let spare = decoder.read_buf();
            let n = spare.len().min(chunk.len() - offset);
            assert!(n > 0, "the read buffer must never be empty");
            spare[..n].copy_from_slice(&chunk[offset..offset + n]);
            decoder.filled(n);
            offset += n;
            loop {
                match decoder.poll() {
                    Ok(Some(decoded)) => got.push(owned(decoded)),
                    Ok(None) => break,
                    Err(e) => {
                        got_error = Some(e);
                        break 'outer;
                    }
                }
            }
        }
    }
    assert_eq!(got, expected);
    assert_eq!(got_error, expected_error);
    assert_eq!(decoder.stats(), reference.stats());

    let mut realtime = RealtimeState::default();
    let _ = realtime.decode(&stream);
});
