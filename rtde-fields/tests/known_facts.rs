//! Facts about RTDE fields pinned from the RTDE guide (and, where the guide copy predates a
//! field, from the peer named in the data file). Each assertion fails when the table drifts.

use rtde_fields::{
    Availability, ControllerVersion, Direction, Generation, RegisterBank, RegisterKind, WireType,
    all_fields, fields, lookup, lookup_ignore_case, suggest,
};

use Direction::{Input, Output};

fn v(s: &str) -> ControllerVersion {
    s.parse().unwrap()
}

/// `(name, type, cb3, e_series, polyscope_x)`, `-` where a generation lacks the field.
#[rustfmt::skip]
const OUTPUTS: &[(&str, WireType, &str, &str, &str)] = &[
    ("timestamp", WireType::Double, "3.4.0", "5.0.0", "10.7.0"),
    ("target_q", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_q", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_qd", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_TCP_pose", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_TCP_speed", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_TCP_force", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_digital_input_bits", WireType::Uint64, "3.4.0", "5.0.0", "10.7.0"),
    ("actual_digital_output_bits", WireType::Uint64, "3.4.0", "5.0.0", "10.7.0"),
    ("joint_temperatures", WireType::Vector6d, "3.4.0", "5.0.0", "10.7.0"),
    ("robot_mode", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("joint_mode", WireType::Vector6Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("safety_mode", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("safety_status", WireType::Int32, "3.10.0", "5.4.0", "10.7.0"),
    ("actual_tool_accelerometer", WireType::Vector3d, "3.4.0", "5.0.0", "10.7.0"),
    ("runtime_state", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("elbow_position", WireType::Vector3d, "3.5.0", "5.0.0", "10.7.0"),
    ("robot_status_bits", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("safety_status_bits", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("tool_output_voltage", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("tool_output_mode", WireType::Uint8, "3.4.0", "5.0.0", "10.7.0"),
    ("euromap67_24V_voltage", WireType::Double, "3.4.0", "5.0.0", "10.7.0"),
    ("payload", WireType::Double, "3.11.0", "5.5.1", "10.7.0"),
    ("payload_cog", WireType::Vector3d, "3.11.0", "5.5.1", "10.7.0"),
    ("payload_inertia", WireType::Vector6d, "3.15.0", "5.11.0", "10.7.0"),
    ("tcp_offset", WireType::Vector6d, "3.12.0", "5.5.1", "10.7.0"),
    ("script_control_line", WireType::Uint32, "3.14.0", "5.9.0", "10.7.0"),
    ("ft_raw_wrench", WireType::Vector6d, "-", "5.9.0", "10.7.0"),
    ("collision_detection_ratio", WireType::Double, "-", "5.15.0", "10.7.0"),
    ("time_scale_source", WireType::Int32, "-", "5.17.0", "10.7.0"),
    ("actual_current_as_torque", WireType::Vector6d, "-", "5.23.0", "10.11.0"),
    ("target_gravity", WireType::Vector3d, "-", "5.26.0", "10.12.0"),
    ("control_step", WireType::Uint64, "-", "5.26.0", "10.13.0"),
    ("output_bit_registers0_to_31", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("output_bit_register_64", WireType::Bool, "3.9.0", "5.3.0", "10.7.0"),
    ("output_int_register_0", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("output_int_register_23", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("output_int_register_24", WireType::Int32, "3.9.0", "5.3.0", "10.7.0"),
    ("output_double_register_47", WireType::Double, "3.9.0", "5.3.0", "10.7.0"),
    // Input registers read back as outputs.
    ("input_bit_registers32_to_63", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("input_bit_register_64", WireType::Bool, "3.9.0", "5.3.0", "10.7.0"),
    ("input_int_register_23", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("input_int_register_24", WireType::Int32, "3.9.0", "5.3.0", "10.7.0"),
];

#[rustfmt::skip]
const INPUTS: &[(&str, WireType, &str, &str, &str)] = &[
    ("speed_slider_mask", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("speed_slider_fraction", WireType::Double, "3.4.0", "5.0.0", "10.7.0"),
    ("standard_digital_output_mask", WireType::Uint8, "3.4.0", "5.0.0", "10.7.0"),
    ("standard_digital_output", WireType::Uint8, "3.4.0", "5.0.0", "10.7.0"),
    ("configurable_digital_output_mask", WireType::Uint8, "3.4.0", "5.0.0", "10.7.0"),
    ("standard_analog_output_mask", WireType::Uint8, "3.4.0", "5.0.0", "10.7.0"),
    ("standard_analog_output_0", WireType::Double, "3.4.0", "5.0.0", "10.7.0"),
    ("input_bit_registers0_to_31", WireType::Uint32, "3.4.0", "5.0.0", "10.7.0"),
    ("input_bit_register_64", WireType::Bool, "3.9.0", "5.3.0", "10.7.0"),
    ("input_bit_register_127", WireType::Bool, "3.9.0", "5.3.0", "10.7.0"),
    ("input_int_register_0", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("input_int_register_23", WireType::Int32, "3.4.0", "5.0.0", "10.7.0"),
    ("input_int_register_24", WireType::Int32, "3.9.0", "5.3.0", "10.7.0"),
    ("input_int_register_47", WireType::Int32, "3.9.0", "5.3.0", "10.7.0"),
    ("input_double_register_24", WireType::Double, "3.9.0", "5.3.0", "10.7.0"),
    ("external_force_torque", WireType::Vector6d, "3.3.0", "5.0.0", "10.7.0"),
];

fn check(direction: Direction, table: &[(&str, WireType, &str, &str, &str)]) {
    for &(name, wire_type, cb3, e_series, px) in table {
        let f = lookup(direction, name).unwrap_or_else(|| panic!("{direction} `{name}` missing"));
        assert_eq!(f.wire_type(), wire_type, "{name}");
        for (g, expected) in Generation::ALL.into_iter().zip([cb3, e_series, px]) {
            let expected = (expected != "-").then(|| v(expected));
            assert_eq!(f.since(g), expected, "{name} on {g}");
            assert!(f.since_is_recorded(g), "{name} on {g}");
        }
    }
}

#[test]
fn output_types_and_versions() {
    check(Output, OUTPUTS);
}

#[test]
fn input_types_and_versions() {
    check(Input, INPUTS);
}

#[test]
fn availability_follows_the_version_and_generation() {
    let ft = lookup(Output, "ft_raw_wrench").unwrap();
    assert_eq!(
        ft.availability_on(v("3.15.8")),
        Availability::NotOnGeneration(Generation::Cb3)
    );
    assert_eq!(
        ft.availability_on(v("5.8.2")),
        Availability::Since(v("5.9.0"))
    );
    assert_eq!(ft.availability_on(v("5.9.0")), Availability::Available);
    assert_eq!(ft.availability_on(v("10.7.0")), Availability::Available);
    assert_eq!(
        ft.availability_on(v("4.0")),
        Availability::UnknownGeneration
    );

    let status = lookup(Output, "safety_status").unwrap();
    assert!(!status.is_available_on(v("3.9.5")));
    assert!(status.is_available_on(v("3.10.0")));
    assert!(!status.is_available_on(v("5.3.1")));
    assert!(status.is_available_on(v("5.4.0.1234")));

    // The two halves of a register family arrived in different versions.
    assert!(
        lookup(Input, "input_int_register_23")
            .unwrap()
            .is_available_on(v("5.2"))
    );
    assert!(
        !lookup(Input, "input_int_register_24")
            .unwrap()
            .is_available_on(v("5.2"))
    );
    assert!(
        lookup(Input, "input_int_register_24")
            .unwrap()
            .is_available_on(v("5.3"))
    );
}

#[test]
fn names_that_do_not_exist_are_absent() {
    for name in [
        "input_bit_register_5",
        "input_bit_register_63",
        "input_bit_register_128",
        "input_int_register_48",
        "output_bit_register_0",
        "controller_step",
        "actual_qdd",    // listed by a peer, never published by a controller
        "actual_moment", // likewise
    ] {
        assert!(
            lookup(Output, name).is_none() && lookup(Input, name).is_none(),
            "{name}"
        );
    }
    assert!(
        lookup(Input, "actual_q").is_none(),
        "outputs are not inputs"
    );
    assert!(lookup(Input, "output_int_register_24").is_none());
}

#[test]
fn counts_per_direction_and_register_family() {
    assert_eq!(fields(Output).len(), 406);
    assert_eq!(fields(Input).len(), 175);
    assert_eq!(all_fields().count(), 581);

    let count = |direction: Direction, bank: RegisterBank, kind: RegisterKind| {
        fields(direction)
            .iter()
            .filter_map(|f| f.register())
            .filter(|r| r.bank() == bank && r.kind() == kind)
            .count()
    };
    for (direction, bank) in [
        (Output, RegisterBank::Output),
        (Output, RegisterBank::Input),
        (Input, RegisterBank::Input),
    ] {
        assert_eq!(
            count(direction, bank, RegisterKind::Bit),
            64,
            "{direction} {bank:?} bits"
        );
        assert_eq!(
            count(direction, bank, RegisterKind::BitWord),
            2,
            "{direction} {bank:?} words"
        );
        assert_eq!(
            count(direction, bank, RegisterKind::Int),
            48,
            "{direction} {bank:?} ints"
        );
        assert_eq!(
            count(direction, bank, RegisterKind::Double),
            48,
            "{direction} {bank:?} doubles"
        );
    }
    assert_eq!(
        count(Input, RegisterBank::Output, RegisterKind::Int),
        0,
        "clients cannot write output registers"
    );
    // 406 outputs: 162 registers of each bank and 82 other fields.
    let non_register = fields(Output)
        .iter()
        .filter(|f| f.register().is_none())
        .count();
    assert_eq!(non_register, 406 - 2 * 162);
}

#[test]
fn reserved_and_free_register_ranges() {
    for f in all_fields() {
        let Some(r) = f.register() else { continue };
        let expected = match r.kind() {
            RegisterKind::Int | RegisterKind::Double => r.index() <= 23,
            RegisterKind::Bit => false, // individual bits exist only from 64
            RegisterKind::BitWord => true,
        };
        assert_eq!(r.is_reserved_for_fieldbus(), expected, "{}", f.name());
        assert_eq!(
            r.kind()
                .external_range()
                .is_some_and(|x| x.contains(&r.index())),
            !expected,
            "{}",
            f.name()
        );
    }
    let reserved = |d| {
        fields(d)
            .iter()
            .filter(|f| f.register().is_some_and(|r| r.is_reserved_for_fieldbus()))
            .count()
    };
    // Per bank: 24 int + 24 double + 2 packed words.
    assert_eq!(reserved(Input), 50);
    assert_eq!(reserved(Output), 100);
    let word = lookup(Input, "input_bit_registers32_to_63")
        .unwrap()
        .register()
        .unwrap();
    assert_eq!(word.indices(), 32..=63);
}

#[test]
fn input_registers_are_readable_as_outputs() {
    for f in fields(Input).iter().filter(|f| f.register().is_some()) {
        let back =
            lookup(Output, f.name()).unwrap_or_else(|| panic!("{} has no read-back", f.name()));
        assert!(back.is_read_back());
        assert_eq!(back.wire_type(), f.wire_type());
    }
    assert!(
        !lookup(Output, "output_int_register_24")
            .unwrap()
            .is_read_back()
    );
    assert!(!lookup(Output, "actual_q").unwrap().is_read_back());
}

#[test]
fn case_insensitive_lookup_maps_rust_names_to_wire_names() {
    for (rust, wire) in [
        ("actual_tcp_pose", "actual_TCP_pose"),
        ("actual_tcp_speed", "actual_TCP_speed"),
        ("target_tcp_pose", "target_TCP_pose"),
        ("euromap67_24v_voltage", "euromap67_24V_voltage"),
    ] {
        assert_eq!(lookup_ignore_case(Output, rust).unwrap().name(), wire);
    }
}

#[test]
fn suggestions_for_common_typos() {
    for (typo, expected) in [
        ("actual_tcp_pos", "actual_TCP_pose"),
        ("acutal_q", "actual_q"),
        ("actual_joint_temperatures", "joint_temperatures"),
        ("safety_stauts", "safety_status"),
        ("timestamps", "timestamp"),
        ("controller_step", "control_step"),
        ("actual_digital_input_bit", "actual_digital_input_bits"),
        ("runtime_status", "runtime_state"),
        ("output_int_registers_24", "output_int_register_24"),
    ] {
        assert_eq!(
            suggest(Output, typo).map(|f| f.name()),
            Some(expected),
            "{typo}"
        );
    }
    assert_eq!(
        suggest(Input, "standard_digital_outputs").unwrap().name(),
        "standard_digital_output"
    );
    assert_eq!(
        suggest(Input, "speed_slider_fractoin").unwrap().name(),
        "speed_slider_fraction"
    );
    assert!(
        suggest(Output, "joint_angles").is_none(),
        "nothing plausible"
    );
}

#[test]
fn versions_without_a_source_are_marked() {
    let f = lookup(Output, "actual_TCP_acceleration").unwrap();
    assert!(!f.since_is_recorded(Generation::ESeries));
    assert!(
        f.is_available_on(v("5.0.0")),
        "an unrecorded version lets the controller decide"
    );
}

/// The RTDE guide's input table: which mask gates which value, and which bits.
#[test]
fn masks_gate_what_the_guide_says() {
    use rtde_fields::{Gate, mask_of, masked_by, masks};
    let cases = [
        (
            "standard_digital_output",
            "standard_digital_output_mask",
            0xff,
        ),
        (
            "configurable_digital_output",
            "configurable_digital_output_mask",
            0xff,
        ),
        ("tool_digital_output", "tool_digital_output_mask", 0b11),
        ("speed_slider_fraction", "speed_slider_mask", 0b1),
        (
            "standard_analog_output_type",
            "standard_analog_output_mask",
            0b11,
        ),
        (
            "standard_analog_output_0",
            "standard_analog_output_mask",
            0b01,
        ),
        (
            "standard_analog_output_1",
            "standard_analog_output_mask",
            0b10,
        ),
    ];
    assert_eq!(masks().len(), cases.len());
    for (value, mask, bits) in cases {
        let m = mask_of(value).unwrap_or_else(|| panic!("{value} has no mask"));
        assert_eq!((m.mask(), m.mask_bits()), (mask, bits), "{value}");
        assert!(lookup(Input, mask).is_some() && lookup(Input, value).is_some());
        if let Some(r) = m.reads_back() {
            assert!(lookup(Output, r.field()).is_some(), "{}", r.field());
        }
    }
    assert_eq!(
        mask_of("speed_slider_fraction").unwrap().gate(),
        Gate::Whole { bit: 0 }
    );
    assert_eq!(masked_by("standard_analog_output_mask").count(), 3);
    assert!(mask_of("input_int_register_24").is_none());
}

#[test]
fn units_and_frames_where_universal_robots_documents_them() {
    let out = |name: &str| lookup(Output, name).unwrap();
    for (name, unit, frame) in [
        ("timestamp", Some("s"), None),
        ("actual_q", Some("rad"), None),
        ("target_qd", Some("rad/s"), None),
        ("actual_TCP_pose", Some("m, rad"), Some("base")),
        ("target_TCP_pose", Some("m, rad"), Some("base")),
        ("actual_TCP_speed", Some("m/s, rad/s"), Some("base")),
        ("tcp_offset", Some("m, rad"), Some("flange")),
        ("elbow_position", Some("m"), Some("base")),
        ("joint_temperatures", Some("degC"), None),
        ("tcp_force_scalar", Some("N"), None),
        ("actual_execution_time", Some("ms"), None),
        ("payload", Some("kg"), None),
        ("payload_cog", Some("m"), Some("flange")),
        (
            "actual_tool_accelerometer",
            Some("m/s^2"),
            Some("tool axes"),
        ),
        ("target_gravity", Some("m/s^2"), Some("base")),
        ("robot_mode", None, None),
        // No Universal Robots text gives these a unit; the registry must not invent one.
        ("target_current", None, None),
        ("actual_main_voltage", None, None),
    ] {
        let f = out(name);
        assert_eq!((f.unit(), f.frame()), (unit, frame), "{name}");
        // Every unit and frame names its source; nothing else claims one.
        assert_eq!(
            f.unit_source().is_some(),
            unit.is_some() || frame.is_some(),
            "{name}"
        );
    }
    // Users confuse which frame the TCP wrench is in: the axes are the base's, the point
    // depends on the generation.
    let force = out("actual_TCP_force");
    assert_eq!(force.unit(), Some("N, Nm"));
    let frame = force.frame().unwrap();
    assert!(frame.starts_with("base axes"), "{frame}");
    assert!(frame.contains("flange") && frame.contains("CB3"), "{frame}");
    // Inputs carry units too: the wrench a client feeds in and the speed slider it sets.
    for (name, unit) in [
        ("external_force_torque", "N, Nm"),
        ("speed_slider_fraction", "ratio [0..1]"),
    ] {
        let f = lookup(Input, name).unwrap();
        assert_eq!(f.unit(), Some(unit), "{name}");
        assert!(
            f.unit_source().unwrap().contains("UR Client Library"),
            "{name}"
        );
    }
    for f in fields(Output).iter().chain(fields(Input)) {
        assert_eq!(
            f.unit_source().is_some(),
            f.unit().is_some() || f.frame().is_some(),
            "{}",
            f.name()
        );
    }
}

#[test]
fn safety_status_bits_documents_bit_11() {
    let f = lookup(Output, "safety_status_bits").unwrap();
    assert!(
        f.description().contains("bit 11 3PE"),
        "{}",
        f.description()
    );
    assert!(f.source().contains("bit 11"), "{}", f.source());
}
