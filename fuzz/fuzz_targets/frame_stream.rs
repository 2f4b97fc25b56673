//! A byte stream split at arbitrary points decodes to the same frames (or the same error)
//! as the stream parsed in one piece, and never panics.
#![no_main]

mod pieces;

use libfuzzer_sys::fuzz_target;
use pieces::pieces;
use rtde_core::protocol::{Frame, FrameBuffer};

fuzz_target!(|input: (Vec<u8>, Vec<u16>)| {
    let (stream, splits) = input;

    // Reference: parse the whole stream at once.
    let mut expected = Vec::new();
    let mut rest = &stream[..];
    let expected_error = loop {
        match Frame::parse(rest) {
            Ok(Some((frame, used))) => {
                expected.push((frame.kind, frame.payload.to_vec()));
                rest = &rest[used..];
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };

    // The same stream through the reusable buffer, in chunks.
    let mut frames = FrameBuffer::new();
    let mut got = Vec::new();
    let mut got_error = None;
    'outer: for chunk in pieces(&stream, &splits) {
        let mut offset = 0;
        while offset < chunk.len() {
            let spare = frames.spare();
            let n = spare.len().min(chunk.len() - offset);
            assert!(
                n > 0,
                "spare space must never be empty while a frame is incomplete"
            );
            spare[..n].copy_from_slice(&chunk[offset..offset + n]);
            frames.commit(n);
            offset += n;
            loop {
                match frames.next_frame() {
                    Ok(Some(frame)) => got.push((frame.kind, frame.payload.to_vec())),
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
});
