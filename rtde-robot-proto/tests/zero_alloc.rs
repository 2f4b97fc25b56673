//! Decoding robot state messages performs no heap allocation once the decoder's buffer
//! has grown to the largest message: a counting global allocator proves it over 10,000
//! messages fed through `read_buf`/`filled`/`poll`, as a client's reads do.
//!
//! This file is a test binary of its own so that its allocator counts nothing else.

use rtde_testkit::counting_allocator::{CountingAllocator, on_this_thread};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

use rtde_core::fields::ControllerVersion;
use rtde_robot_proto::primary::{
    Decoded, Decoder, Joint, JointData, Layout, MasterboardData, PrimaryMessage, RobotModeData,
    RobotState,
};

#[test]
fn robot_state_messages_decode_without_allocating() {
    let version = ControllerVersion::new(5, 21, 0, 0);
    let mut stream = Vec::new();
    PrimaryMessage::Version {
        project: "URControl".into(),
        version,
        build_date: String::new(),
    }
    .encode(0, &mut stream);
    let mut state = RobotState::default();
    state.robot_mode = Some(RobotModeData::default());
    state.joints = Some(JointData {
        joints: [Joint::default(); 6],
    });
    state.masterboard = Some(MasterboardData::default());
    let mut message = Vec::new();
    state.encode(Layout::of(version), &mut message);

    let mut decoder = Decoder::new();
    let feed = |decoder: &mut Decoder, bytes: &[u8]| {
        // In pieces of 100 bytes, as reads return them.
        for piece in bytes.chunks(100) {
            decoder.read_buf()[..piece.len()].copy_from_slice(piece);
            decoder.filled(piece.len());
        }
    };
    feed(&mut decoder, &stream);
    assert!(matches!(
        decoder.poll().unwrap(),
        Some(Decoded::Message(PrimaryMessage::Version { .. }))
    ));
    // Warm up: the buffer grows to a message once.
    feed(&mut decoder, &message);
    assert!(decoder.poll().unwrap().is_some());

    let (allocations, states) = on_this_thread(|| {
        let mut states = 0;
        for _ in 0..10_000 {
            feed(&mut decoder, &message);
            while let Some(decoded) = decoder.poll().unwrap() {
                if let Decoded::State { state, .. } = decoded {
                    states += u32::from(state.joints.is_some());
                }
            }
        }
        states
    });
    assert_eq!(states, 10_000);
    assert_eq!(
        allocations, 0,
        "allocations while decoding 10,000 robot states"
    );
}
