//! The primary interface's robot state message, against its documented layouts: each
//! sub-package's size per generation, bytes written field by field from the
//! documentation, and a stream cut anywhere.

use rtde_core::fields::ControllerVersion;
use rtde_robot_proto::primary::{
    AdditionalInfo, CalibrationData, CartesianInfo, ConfigurationData, Decoded, Decoder, Euromap67,
    ForceModeData, Joint, JointData, KinematicsInfo, Layout, MasterboardData, PrimaryMessage,
    RobotModeData, RobotState, ToolCommunicationInfo, ToolData, ToolModeInfo,
};

fn layout(version: &str) -> Layout {
    Layout::of(version.parse::<ControllerVersion>().unwrap())
}

/// A state with every sub-package, each field a distinct value.
fn full_state() -> RobotState {
    let mut s = RobotState::default();
    let six = |base: f64| std::array::from_fn::<f64, 6, _>(|i| base + i as f64 / 10.0);
    s.robot_mode = Some(RobotModeData {
        timestamp: 123_456,
        real_robot_connected: false,
        real_robot_enabled: true,
        robot_power_on: true,
        emergency_stopped: false,
        protective_stopped: true,
        program_running: true,
        program_paused: false,
        robot_mode: 7,
        control_mode: 0,
        target_speed_fraction: 0.75,
        speed_scaling: 0.5,
        target_speed_fraction_limit: 1.0,
    });
    s.joints = Some(JointData {
        joints: std::array::from_fn(|i| Joint {
            q_actual: i as f64,
            q_target: i as f64 + 0.5,
            qd_actual: -(i as f64),
            i_actual: 1.5,
            v_actual: 48.0,
            t_motor: 36.0,
            t_micro: 0.0,
            mode: 253,
        }),
    });
    s.cartesian = Some(CartesianInfo {
        tcp_pose: six(0.1),
        tcp_offset: six(0.0),
    });
    s.kinematics = Some(KinematicsInfo {
        checksum: [u32::MAX; 6],
        dh_theta: six(0.0),
        dh_a: six(-0.4),
        dh_d: six(0.16),
        dh_alpha: six(1.5),
        calibration_status: 2,
    });
    s.calibration = Some(CalibrationData { values: six(3.0) });
    s.masterboard = Some(MasterboardData {
        digital_input_bits: 0x0001_0203,
        digital_output_bits: 0b101,
        analog_input_range: [0, 1],
        analog_input: [0.25, 0.5],
        analog_output_domain: [1, 0],
        analog_output: [0.75, 1.0],
        temperature: 40.0,
        robot_voltage_48v: 48.0,
        robot_current: 0.5,
        io_current: 0.1,
        safety_mode: 1,
        in_reduced_mode: 0,
        euromap67: None,
        operational_mode_selector_input: 0,
        three_position_enabling_device_input: 1,
    });
    s.tool = Some(ToolData {
        analog_input_range: [0, 1],
        analog_input: [0.1, 0.2],
        voltage_48v: 24.0,
        output_voltage: 24,
        current: 0.05,
        temperature: 35.0,
        tool_mode: 253,
    });
    s.configuration = Some(ConfigurationData {
        joint_min_limit: [-6.3; 6],
        joint_max_limit: [6.3; 6],
        joint_max_speed: [3.3; 6],
        joint_max_acceleration: [40.0; 6],
        v_joint_default: 1.05,
        a_joint_default: 1.4,
        v_tool_default: 0.25,
        a_tool_default: 1.2,
        eq_radius: 0.25,
        dh_a: six(-0.4),
        dh_d: six(0.16),
        dh_alpha: six(1.5),
        dh_theta: [0.0; 6],
        masterboard_version: 6,
        controller_box_type: 4,
        robot_type: 1,
        robot_sub_type: 3,
    });
    s.force_mode = Some(ForceModeData {
        wrench: six(1.0),
        robot_dexterity: 0.9,
    });
    s.additional = Some(AdditionalInfo {
        button_state: 0,
        freedrive_button_enabled: true,
        io_enabled_freedrive: false,
    });
    s.tool_communication = Some(ToolCommunicationInfo {
        enabled: false,
        baud_rate: 115_200,
        parity: 0,
        stop_bits: 1,
        rx_idle_chars: 1.5,
        tx_idle_chars: 3.5,
    });
    s.tool_mode = Some(ToolModeInfo {
        output_mode: 0,
        digital_output_mode: [1, 1],
    });
    s
}

/// Each sub-package's type and whole size (its 5-byte header included), in order.
fn sub_packages(message: &[u8]) -> Vec<(u8, usize)> {
    let mut out = Vec::new();
    let mut rest = &message[5..];
    while !rest.is_empty() {
        let size = usize::try_from(i32::from_be_bytes(rest[..4].try_into().unwrap())).unwrap();
        out.push((rest[4], size));
        rest = &rest[size..];
    }
    out
}

/// The sizes each generation's documentation and controllers give: CB3 3.10 and later
/// with the masterboard's trailing byte, additional info of three booleans and no tool
/// communication or tool mode; e-Series 5.4 to 5.25.0.
#[test]
fn every_sub_package_has_its_generations_size() {
    let state = full_state();
    let cb3 = [
        (0, 47),
        (1, 251),
        (4, 101),
        (5, 225),
        (9, 53),
        (3, 75),
        (2, 37),
        (6, 445),
        (7, 61),
        (8, 8),
    ];
    let e_series = [
        (0, 47),
        (1, 251),
        (4, 101),
        (5, 225),
        (9, 53),
        (3, 75),
        (2, 37),
        (6, 445),
        (7, 61),
        (8, 9),
        (11, 26),
        (12, 8),
    ];
    for (version, expected) in [("3.15.8", &cb3[..]), ("5.21.0", &e_series[..])] {
        let mut out = Vec::new();
        state.encode(layout(version), &mut out);
        assert_eq!(out[4], 16, "{version}: robot state package type");
        assert_eq!(sub_packages(&out), expected, "{version}");
        let total: usize = expected.iter().map(|(_, n)| n).sum::<usize>() + 5;
        assert_eq!(out.len(), total);
        assert_eq!(out[..4], i32::try_from(total).unwrap().to_be_bytes());
    }
    // Version steps: the masterboard's last byte from 3.10 and 5.4, the configuration's
    // two 16-bit fields from 5.25.1, robot mode data's last byte from 3.5.
    let size_of = |version: &str, kind: u8| {
        let mut out = Vec::new();
        state.encode(layout(version), &mut out);
        sub_packages(&out)
            .into_iter()
            .find(|(k, _)| *k == kind)
            .unwrap()
            .1
    };
    assert_eq!(size_of("3.9.0", 3), 74);
    assert_eq!(size_of("5.3.0", 3), 74);
    assert_eq!(size_of("5.25.1", 6), 449);
    assert_eq!(size_of("5.25.0", 6), 445);
    assert_eq!(size_of("3.4.0", 0), 46);
    // With a Euromap 67 interface installed, its 16 bytes follow the flag.
    let mut with_euromap = state;
    with_euromap.masterboard.as_mut().unwrap().euromap67 = Some(Euromap67 {
        input_bits: 1,
        output_bits: 2,
        voltage: 24.0,
        current: 0.5,
    });
    let mut out = Vec::new();
    with_euromap.encode(layout("5.21.0"), &mut out);
    assert!(sub_packages(&out).contains(&(3, 91)));
}

#[test]
fn every_generation_decodes_what_it_encodes() {
    for version in ["3.15.8", "3.9.0", "5.3.0", "5.21.0", "5.25.1", "10.7.0"] {
        let layout = layout(version);
        let mut state = full_state();
        if !layout.is_e_series() {
            state.tool_communication = None;
            state.tool_mode = None;
        }
        let mut out = Vec::new();
        state.encode(layout, &mut out);
        let mut seen = RobotState::default();
        let update = seen.update(&out[5..], layout);
        assert_eq!(seen, state, "{version}");
        assert_eq!((update.skipped, update.cut), (0, 0), "{version}");
    }
}

/// Robot mode data, the additional info of each generation and kinematics info, written
/// byte by byte from the documented field lists.
#[test]
fn sub_packages_at_the_byte() {
    let mut state = RobotState::default();
    state.robot_mode = full_state().robot_mode;
    let mut out = Vec::new();
    state.encode(layout("5.21.0"), &mut out);
    let mut expected = vec![0, 0, 0, 52, 16, 0, 0, 0, 47, 0];
    expected.extend_from_slice(&123_456u64.to_be_bytes()); // timestamp
    expected.extend_from_slice(&[0, 1, 1, 0, 1, 1, 0]); // the seven booleans
    expected.extend_from_slice(&[7, 0]); // robot mode, control mode
    for x in [0.75f64, 0.5, 1.0] {
        expected.extend_from_slice(&x.to_be_bytes());
    }
    expected.push(0); // reserved
    assert_eq!(out, expected);

    let additional = AdditionalInfo {
        button_state: 1,
        freedrive_button_enabled: true,
        io_enabled_freedrive: true,
    };
    let mut state = RobotState::default();
    state.additional = Some(additional);
    for (version, bytes) in [
        ("3.15.8", &[0, 0, 0, 8, 8, 1, 1, 1][..]),
        ("5.21.0", &[0, 0, 0, 9, 8, 1, 1, 1, 0][..]),
    ] {
        let mut out = Vec::new();
        state.encode(layout(version), &mut out);
        assert_eq!(&out[5..], bytes, "{version}");
    }

    let mut state = RobotState::default();
    let kinematics = full_state().kinematics.unwrap();
    state.kinematics = Some(kinematics);
    let mut out = Vec::new();
    state.encode(layout("5.21.0"), &mut out);
    let body = &out[10..];
    assert_eq!(body[..24], [0xff; 24]); // six checksums
    let double = |i: usize| f64::from_be_bytes(body[24 + 8 * i..32 + 8 * i].try_into().unwrap());
    // theta, a, d, alpha: six each.
    assert_eq!(double(0), kinematics.dh_theta[0]);
    assert_eq!(double(6), kinematics.dh_a[0]);
    assert_eq!(double(13), kinematics.dh_d[1]);
    assert_eq!(double(23), kinematics.dh_alpha[5]);
    assert_eq!(body[216..], 2u32.to_be_bytes()); // calibration status, four bytes
}

#[test]
fn a_stream_cut_anywhere_never_panics_and_loses_no_whole_package() {
    let version = ControllerVersion::new(5, 21, 0, 0);
    let mut stream = Vec::new();
    let mut ends = Vec::new();
    PrimaryMessage::Version {
        project: "URControl".into(),
        version,
        build_date: "today".into(),
    }
    .encode(0, &mut stream);
    ends.push(stream.len());
    full_state().encode(Layout::of(version), &mut stream);
    ends.push(stream.len());
    PrimaryMessage::Text("hello".into()).encode(1, &mut stream);
    ends.push(stream.len());
    for cut in 0..=stream.len() {
        let mut decoder = Decoder::new();
        let mut at = 0;
        let mut packages = 0;
        while let Some((_, used)) = decoder.decode(&stream[at..cut]).unwrap() {
            at += used;
            packages += 1;
        }
        // Every package that ends before the cut, and no other.
        assert_eq!(
            packages,
            ends.iter().filter(|&&end| end <= cut).count(),
            "{cut}"
        );
    }
    let mut decoder = Decoder::new();
    let (_, used) = decoder.decode(&stream).unwrap().unwrap();
    decoder.decode(&stream[used..]).unwrap();
    assert_eq!(decoder.state(), &full_state());
}

#[test]
fn unknown_and_cut_sub_packages_are_counted_and_the_rest_is_kept() {
    let layout = layout("5.21.0");
    let mut state = RobotState::default();
    state.robot_mode = full_state().robot_mode;
    state.tool = full_state().tool;
    let mut message = Vec::new();
    state.encode(layout, &mut message);
    // An unknown sub-package (type 99) between them, and a tool data cut to 20 bytes.
    let mut body = message[5..52].to_vec();
    body.extend_from_slice(&[0, 0, 0, 8, 99, 1, 2, 3]);
    let mut cut_tool = message[52..72].to_vec();
    cut_tool[..4].copy_from_slice(&20i32.to_be_bytes());
    body.extend_from_slice(&cut_tool);
    let mut seen = RobotState::default();
    let update = seen.update(&body, layout);
    assert_eq!((update.skipped, update.cut), (1, 1));
    assert!(update.has(0) && !update.has(2));
    assert_eq!(seen.robot_mode, state.robot_mode);
    assert_eq!(seen.tool, None);
    // A sub-package longer than its layout (a newer version's fields): decoded, the
    // rest passed over.
    let mut longer = message[52..].to_vec();
    longer[..4].copy_from_slice(&(37i32 + 4).to_be_bytes());
    longer.extend_from_slice(&[9, 9, 9, 9]);
    let update = seen.update(&longer, layout);
    assert!(update.has(2));
    assert_eq!(seen.tool, state.tool);
    // A size that runs past the message, or below the header's.
    for bad in [
        [0, 0, 0, 99, 0],
        [0, 0, 0, 2, 0],
        [0xff, 0xff, 0xff, 0xff, 0],
    ] {
        let update = seen.update(&bad, layout);
        assert_eq!(update.cut, 1);
    }
}

#[test]
fn the_decoder_follows_the_version_and_counts_what_it_passes_over() {
    let mut stream = Vec::new();
    let cb3 = ControllerVersion::new(3, 15, 8, 0);
    PrimaryMessage::Version {
        project: "URControl".into(),
        version: cb3,
        build_date: String::new(),
    }
    .encode(0, &mut stream);
    let mut state = full_state();
    state.tool_communication = None;
    state.tool_mode = None;
    state.encode(Layout::of(cb3), &mut stream);
    // A package of another type (modbus info, 5), then a key message cut short.
    stream.extend_from_slice(&[0, 0, 0, 7, 5, 0, 0]);
    stream.extend_from_slice(&[0, 0, 0, 17, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0xfe, 7, 0, 0]);
    let mut decoder = Decoder::new();
    let mut at = 0;
    let mut kinds = Vec::new();
    while let Some((decoded, used)) = decoder.decode(&stream[at..]).unwrap() {
        kinds.push(match decoded {
            Decoded::State { state: seen, .. } => {
                assert_eq!(seen, &state);
                "state"
            }
            Decoded::Message(PrimaryMessage::Version { .. }) => "version",
            Decoded::Message(_) => "other",
            _ => "?",
        });
        at += used;
    }
    assert_eq!(kinds, ["version", "state", "other", "other"]);
    assert_eq!(decoder.layout(), Layout::of(cb3));
    let stats = decoder.stats();
    assert_eq!(
        (
            stats.states,
            stats.messages,
            stats.skipped_packages,
            stats.cut_messages
        ),
        (1, 1, 1, 1)
    );
}
