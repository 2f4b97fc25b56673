//! Hand-written byte fixtures for every package type in both protocol versions.
//! Each fixture is decoded from the bytes and encoded back to the same bytes.

use rtde_core::protocol::{
    ClientMessage, ControllerMessage, DecodeErrorKind, EncodeError, Frame, FrameBuffer,
    MessageLevel,
    ProtocolVersion::{self, V1, V2},
    TextMessage,
};
use rtde_fields::ControllerVersion;

/// Decodes `bytes` as one whole frame sent by a client, and encodes the message back.
fn client_round_trip(version: ProtocolVersion, bytes: &[u8], expected: ClientMessage<'_>) {
    let (frame, used) = Frame::parse(bytes).unwrap().expect("a whole frame");
    assert_eq!(used, bytes.len());
    assert_eq!(ClientMessage::decode(frame, version).unwrap(), expected);
    let mut buf = [0u8; 512];
    let n = expected.encode(version, &mut buf).unwrap();
    assert_eq!(&buf[..n], bytes);
    assert_eq!(expected.encoded_len(version).unwrap(), n);
}

/// Decodes `bytes` as one whole frame sent by a controller, and encodes the message back.
fn controller_round_trip(version: ProtocolVersion, bytes: &[u8], expected: ControllerMessage<'_>) {
    let (frame, used) = Frame::parse(bytes).unwrap().expect("a whole frame");
    assert_eq!(used, bytes.len());
    assert_eq!(ControllerMessage::decode(frame, version).unwrap(), expected);
    let mut buf = [0u8; 512];
    let n = expected.encode(version, &mut buf).unwrap();
    assert_eq!(&buf[..n], bytes);
    assert_eq!(expected.encoded_len(version).unwrap(), n);
}

#[test]
fn request_protocol_version_v2() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x05, // size 5, header included
        b'V',       // REQUEST_PROTOCOL_VERSION
        0x00, 0x02, // u16 version 2
    ];
    client_round_trip(
        V1,
        &bytes,
        ClientMessage::RequestProtocolVersion { version: 2 },
    );
}

#[test]
fn protocol_version_replies() {
    // 00 04 | 'V' | 01 = accepted; 00 = refused (a v1-only controller)
    controller_round_trip(
        V1,
        &[0x00, 0x04, b'V', 0x01],
        ControllerMessage::ProtocolVersionReply { accepted: true },
    );
    controller_round_trip(
        V1,
        &[0x00, 0x04, b'V', 0x00],
        ControllerMessage::ProtocolVersionReply { accepted: false },
    );
}

#[test]
fn get_urcontrol_version_and_reply() {
    // 00 03 | 'v': the query has no payload
    client_round_trip(V2, &[0x00, 0x03, b'v'], ClientMessage::GetUrcontrolVersion);
    #[rustfmt::skip]
    let reply = [
        0x00, 0x13,             // size 19
        b'v',                   // GET_URCONTROL_VERSION
        0x00, 0x00, 0x00, 0x05, // major 5
        0x00, 0x00, 0x00, 0x15, // minor 21
        0x00, 0x00, 0x00, 0x00, // bugfix 0
        0x00, 0x01, 0x9f, 0xe3, // build 106467
    ];
    controller_round_trip(
        V2,
        &reply,
        ControllerMessage::UrcontrolVersion(ControllerVersion::new(5, 21, 0, 106_467)),
    );
}

#[test]
fn text_message_v1() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x08,             // size 8
        b'M',                   // TEXT_MESSAGE
        0x02,                   // level: warning
        b'b', b'o', b'o', b't', // text
    ];
    let msg = TextMessage {
        level: MessageLevel::Warning,
        message: b"boot",
        source: b"",
    };
    controller_round_trip(V1, &bytes, ControllerMessage::TextMessage(msg));
    client_round_trip(V1, &bytes, ClientMessage::TextMessage(msg));
}

#[test]
fn text_message_v2() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x0d,                  // size 13
        b'M',                        // TEXT_MESSAGE
        0x04, b'b', b'o', b'o', b't', // message length 4, message
        0x03, b'U', b'R', b'C',       // source length 3, source
        0x01,                         // level: error
    ];
    let msg = TextMessage {
        level: MessageLevel::Error,
        message: b"boot",
        source: b"URC",
    };
    controller_round_trip(V2, &bytes, ControllerMessage::TextMessage(msg));
    client_round_trip(V2, &bytes, ClientMessage::TextMessage(msg));
}

#[test]
fn setup_outputs_v2_carries_the_frequency_first() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x1d,                                     // size 29
        b'O',                                           // SETUP_OUTPUTS
        0x40, 0x7f, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, // f64 500.0 Hz
        b't', b'i', b'm', b'e', b's', b't', b'a', b'm', b'p', b',', // "timestamp,"
        b'a', b'c', b't', b'u', b'a', b'l', b'_', b'q', // "actual_q"
    ];
    assert_eq!(
        500.0f64.to_be_bytes(),
        [0x40, 0x7f, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00]
    );
    client_round_trip(
        V2,
        &bytes,
        ClientMessage::SetupOutputs {
            frequency: Some(500.0),
            names: "timestamp,actual_q",
        },
    );
}

#[test]
fn setup_outputs_v1_carries_names_only() {
    // 00 0c | 'O' | "timestamp"
    let bytes = [
        0x00, 0x0c, b'O', b't', b'i', b'm', b'e', b's', b't', b'a', b'm', b'p',
    ];
    client_round_trip(
        V1,
        &bytes,
        ClientMessage::SetupOutputs {
            frequency: None,
            names: "timestamp",
        },
    );
}

#[test]
fn setup_outputs_reply_v2_with_not_found() {
    #[rustfmt::skip]
    let mut bytes = vec![
        0x00, 0x00, // size, patched below
        b'O',       // SETUP_OUTPUTS
        0x01,       // output recipe id 1
    ];
    bytes.extend_from_slice(b"DOUBLE,NOT_FOUND,VECTOR6D"); // one type per requested name
    let size = u16::try_from(bytes.len()).unwrap().to_be_bytes();
    bytes[..2].copy_from_slice(&size);
    controller_round_trip(
        V2,
        &bytes,
        ControllerMessage::SetupOutputsReply {
            recipe_id: Some(1),
            types: "DOUBLE,NOT_FOUND,VECTOR6D",
        },
    );
}

#[test]
fn setup_outputs_reply_v1_has_no_recipe_id() {
    // 00 09 | 'O' | "DOUBLE"
    let bytes = [0x00, 0x09, b'O', b'D', b'O', b'U', b'B', b'L', b'E'];
    controller_round_trip(
        V1,
        &bytes,
        ControllerMessage::SetupOutputsReply {
            recipe_id: None,
            types: "DOUBLE",
        },
    );
}

#[test]
fn setup_inputs_and_replies() {
    #[rustfmt::skip]
    let request = [
        0x00, 0x18, // size 24
        b'I',       // SETUP_INPUTS
        b'i', b'n', b'p', b'u', b't', b'_', b'i', b'n', b't', b'_', // "input_int_"
        b'r', b'e', b'g', b'i', b's', b't', b'e', b'r', b'_', b'2', b'4', // "register_24"
    ];
    client_round_trip(
        V2,
        &request,
        ClientMessage::SetupInputs {
            names: "input_int_register_24",
        },
    );
    #[rustfmt::skip]
    let accepted = [
        0x00, 0x09,                   // size 9
        b'I',                         // SETUP_INPUTS
        0x02,                         // input recipe id 2
        b'I', b'N', b'T', b'3', b'2', // INT32
    ];
    for version in [V1, V2] {
        controller_round_trip(
            version,
            &accepted,
            ControllerMessage::SetupInputsReply {
                recipe_id: 2,
                types: "INT32",
            },
        );
    }
    // Recipe id 0: rejected, and the token says why.
    #[rustfmt::skip]
    let rejected = [
        0x00, 0x0a, // size 10
        b'I',       // SETUP_INPUTS
        0x00,       // recipe id 0: rejected
        b'I', b'N', b'_', b'U', b'S', b'E', // IN_USE
    ];
    controller_round_trip(
        V2,
        &rejected,
        ControllerMessage::SetupInputsReply {
            recipe_id: 0,
            types: "IN_USE",
        },
    );
}

#[test]
fn start_and_pause() {
    client_round_trip(V2, &[0x00, 0x03, b'S'], ClientMessage::Start);
    client_round_trip(V2, &[0x00, 0x03, b'P'], ClientMessage::Pause);
    controller_round_trip(
        V2,
        &[0x00, 0x04, b'S', 0x01],
        ControllerMessage::StartReply { accepted: true },
    );
    controller_round_trip(
        V2,
        &[0x00, 0x04, b'P', 0x00],
        ControllerMessage::PauseReply { accepted: false },
    );
}

#[test]
fn output_data_package_v2_carries_the_recipe_id() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x0c,                                     // size 12
        b'U',                                           // DATA_PACKAGE
        0x01,                                           // output recipe id 1
        0x40, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // timestamp 42.0
    ];
    let payload = 42.0f64.to_be_bytes();
    controller_round_trip(
        V2,
        &bytes,
        ControllerMessage::DataPackage {
            recipe_id: Some(1),
            payload: &payload,
        },
    );
}

#[test]
fn output_data_package_v1_carries_no_recipe_id() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x0b,                                     // size 11
        b'U',                                           // DATA_PACKAGE
        0x40, 0x45, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // timestamp 42.0, no id before it
    ];
    let payload = 42.0f64.to_be_bytes();
    controller_round_trip(
        V1,
        &bytes,
        ControllerMessage::DataPackage {
            recipe_id: None,
            payload: &payload,
        },
    );
}

#[test]
fn input_data_package_always_carries_the_recipe_id() {
    #[rustfmt::skip]
    let bytes = [
        0x00, 0x08,             // size 8
        b'U',                   // DATA_PACKAGE
        0x03,                   // input recipe id 3
        0xff, 0xff, 0xff, 0xfe, // input_int_register_24 = -2
    ];
    let payload = (-2i32).to_be_bytes();
    for version in [V1, V2] {
        client_round_trip(
            version,
            &bytes,
            ClientMessage::DataPackage {
                recipe_id: 3,
                payload: &payload,
            },
        );
    }
}

#[test]
fn several_frames_in_one_read_and_one_frame_over_many() {
    #[rustfmt::skip]
    let stream = [
        0x00, 0x04, b'V', 0x01,                         // protocol accepted
        0x00, 0x04, b'S', 0x01,                         // start accepted
        0x00, 0x0c, b'U', 0x01, 0x40, 0x45, 0, 0, 0, 0, 0, 0, // data
    ];
    for split in 0..=stream.len() {
        let mut frames = FrameBuffer::new();
        let mut kinds = Vec::new();
        for chunk in [&stream[..split], &stream[split..]] {
            frames.spare()[..chunk.len()].copy_from_slice(chunk);
            frames.commit(chunk.len());
            while let Some(frame) = frames.next_frame().unwrap() {
                kinds.push(frame.kind);
            }
        }
        assert_eq!(kinds, [b'V', b'S', b'U'], "split at {split}");
        assert!(frames.buffered().is_empty());
    }
}

#[test]
fn a_partial_frame_is_not_consumed() {
    let partial = [0x00, 0x0c, b'U', 0x01, 0x40];
    for end in 0..=partial.len() {
        assert_eq!(Frame::parse(&partial[..end]).unwrap(), None);
    }
    let mut frames = FrameBuffer::new();
    frames.spare()[..partial.len()].copy_from_slice(&partial);
    frames.commit(partial.len());
    assert!(frames.next_frame().unwrap().is_none());
    assert_eq!(frames.buffered(), partial);
}

#[test]
fn malformed_frames_are_errors_with_context() {
    // Size below the header.
    let err = Frame::parse(&[0x00, 0x00, b'U']).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::SizeTooSmall { size: 0 });
    // A type byte that is no letter: the stream is out of step.
    let err = Frame::parse(&[0x00, 0x03, 0x00]).unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::UnknownPackageType { byte: 0x00 }
    );
    // An unknown letter is framed, so a reader can skip it, and fails only as a message.
    let (frame, used) = Frame::parse(&[0x00, 0x04, b'X', 0x07]).unwrap().unwrap();
    assert_eq!((frame.kind, frame.payload, used), (b'X', &[0x07][..], 4));
    let err = ControllerMessage::decode(frame, V2).unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::UnknownPackageType { byte: b'X' }
    );
    assert!(
        err.to_string().contains("unknown package type byte 0x58"),
        "{err}"
    );
    // A START reply with two bytes where one belongs.
    let (frame, _) = Frame::parse(&[0x00, 0x05, b'S', 0x01, 0x01])
        .unwrap()
        .unwrap();
    let err = ControllerMessage::decode(frame, V2).unwrap_err();
    assert_eq!(err.kind(), &DecodeErrorKind::TrailingBytes { extra: 1 });
    assert_eq!(err.offset(), 1);
    // A version reply cut short after the major number.
    let (frame, _) = Frame::parse(&[0x00, 0x07, b'v', 0, 0, 0, 5])
        .unwrap()
        .unwrap();
    let err = ControllerMessage::decode(frame, V2).unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::Truncated {
            what: "minor version",
            needed: 4,
            available: 0
        }
    );
    assert!(err.to_string().contains("GET_URCONTROL_VERSION"), "{err}");
    // A v2 text message whose length byte runs past the end.
    let (frame, _) = Frame::parse(&[0x00, 0x05, b'M', 0x09, b'x'])
        .unwrap()
        .unwrap();
    let err = ControllerMessage::decode(frame, V2).unwrap_err();
    assert!(matches!(
        err.kind(),
        DecodeErrorKind::Truncated {
            what: "message text",
            ..
        }
    ));
    // Type names that are not UTF-8.
    let (frame, _) = Frame::parse(&[0x00, 0x05, b'O', 0x01, 0xff])
        .unwrap()
        .unwrap();
    let err = ControllerMessage::decode(frame, V2).unwrap_err();
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::NotUtf8 {
            what: "variable types"
        }
    );
    // A v2 output data package with no room for the recipe id.
    let (frame, _) = Frame::parse(&[0x00, 0x03, b'U']).unwrap().unwrap();
    assert!(ControllerMessage::decode(frame, V2).is_err());
}

#[test]
fn encoders_never_truncate() {
    let msg = ClientMessage::SetupInputs {
        names: "input_int_register_24",
    };
    let mut small = [0u8; 10];
    assert_eq!(
        msg.encode(V2, &mut small),
        Err(EncodeError::BufferTooSmall {
            needed: 24,
            available: 10
        })
    );
    assert_eq!(
        small, [0; 10],
        "nothing is written when the package does not fit"
    );

    let long = "x".repeat(70_000);
    let mut buf = vec![0u8; 80_000];
    let err = ClientMessage::SetupInputs { names: &long }
        .encode(V2, &mut buf)
        .unwrap_err();
    assert!(matches!(
        err,
        EncodeError::PackageTooLong { len: 70_003, .. }
    ));

    let text = [b'a'; 256];
    let msg = TextMessage {
        level: MessageLevel::Info,
        message: &text,
        source: b"",
    };
    let err = ClientMessage::TextMessage(msg)
        .encode(V2, &mut buf)
        .unwrap_err();
    assert_eq!(
        err,
        EncodeError::TextTooLong {
            what: "message",
            len: 256
        }
    );

    // The frequency is v2 only, and v2 requires it.
    let v1_with_freq = ClientMessage::SetupOutputs {
        frequency: Some(125.0),
        names: "timestamp",
    };
    assert!(matches!(
        v1_with_freq.encode(V1, &mut buf),
        Err(EncodeError::NotInVersion(_))
    ));
    let v2_without = ClientMessage::SetupOutputs {
        frequency: None,
        names: "timestamp",
    };
    assert!(matches!(
        v2_without.encode(V2, &mut buf),
        Err(EncodeError::NotInVersion(_))
    ));
    let v1_data_with_id = ControllerMessage::DataPackage {
        recipe_id: Some(1),
        payload: &[],
    };
    assert!(matches!(
        v1_data_with_id.encode(V1, &mut buf),
        Err(EncodeError::NotInVersion(_))
    ));
}
