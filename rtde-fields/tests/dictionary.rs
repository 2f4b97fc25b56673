//! The object-dictionary view: indices pinned (they must never move), the standard's
//! columns per field, PDO mappings, and the CSV round trip.

use rtde_fields::dictionary::{self, Access, DataType, ObjectCode, Presence};
use rtde_fields::{Direction, Generation, object, pdo_mapping};

#[test]
fn indices_are_pinned() {
    // Published indices: changing one breaks every exported mapping that uses it.
    for (direction, name, index) in [
        (Direction::Output, "timestamp", 0x2000),
        (Direction::Output, "actual_q", 0x2006),
        (Direction::Output, "actual_TCP_pose", 0x200C),
        (Direction::Output, "robot_mode", 0x2019),
        (Direction::Output, "output_int_register_24", 0x208C),
        (Direction::Output, "control_step", 0x2194),
        (Direction::Input, "speed_slider_mask", 0x4000),
        (Direction::Input, "standard_digital_output", 0x4003),
        (Direction::Input, "input_int_register_24", 0x4066),
        (Direction::Input, "external_force_torque", 0x40AE),
    ] {
        assert_eq!(
            object(direction, name).map(|o| o.index()),
            Some(index),
            "{name}"
        );
    }
}

#[test]
fn every_field_has_one_index_in_its_area() {
    let objects: Vec<_> = rtde_fields::dictionary().collect();
    assert_eq!(objects.len(), 581);
    assert!(objects.windows(2).all(|w| w[0].index() < w[1].index()));
    for o in &objects {
        let area = match o.field().direction() {
            Direction::Output => 0x2000..=0x3FFF,
            Direction::Input => 0x4000..=0x5FFF,
        };
        assert!(area.contains(&o.index()), "{}", o.field().name());
    }
}

#[test]
fn each_field_carries_the_standards_columns() {
    let q = object(Direction::Output, "actual_q").unwrap();
    assert_eq!(q.object_code(), ObjectCode::Array);
    assert_eq!((q.data_type(), q.elements()), (DataType::Real64, 6));
    assert_eq!(q.access(), Access::Ro);
    assert!(q.pdo_mappable());
    let subs: Vec<(u8, DataType)> = q.entries().collect();
    assert_eq!(subs[0], (0, DataType::Unsigned8), "00h holds the count");
    assert_eq!(subs.len(), 7);
    assert_eq!(subs[6], (6, DataType::Real64));

    let slider = object(Direction::Input, "speed_slider_mask").unwrap();
    assert_eq!(slider.object_code(), ObjectCode::Var);
    assert_eq!(slider.data_type(), DataType::Unsigned32);
    assert_eq!(slider.access(), Access::Rw);
    assert_eq!(
        slider.entries().collect::<Vec<_>>(),
        [(0, DataType::Unsigned32)]
    );

    let names = |f: &str| object(Direction::Output, f).unwrap().data_type().as_str();
    assert_eq!(names("robot_mode"), "INTEGER32");
    assert_eq!(names("actual_digital_input_bits"), "UNSIGNED64");
    assert_eq!(names("tool_output_mode"), "UNSIGNED8");
    assert_eq!(names("output_bit_register_64"), "BOOLEAN");
}

#[test]
fn mandatory_when_every_version_of_the_generation_has_it() {
    let presence = |f: &str| {
        let o = object(Direction::Output, f).unwrap();
        Generation::ALL.map(|g| o.presence(g))
    };
    let (m, o) = (Some(Presence::Mandatory), Some(Presence::Optional));
    assert_eq!(presence("actual_q"), [m, m, m]);
    // Version-gated on e-Series, absent on CB3.
    assert_eq!(presence("ft_raw_wrench"), [None, o, m]);
    assert_eq!(presence("control_step"), [None, o, o]);
    // First version unrecorded: optional, not assumed mandatory.
    let tool = object(Direction::Input, "tool_digital_output").unwrap();
    assert_eq!(tool.presence(Generation::ESeries), o);
}

#[test]
fn a_recipe_is_its_pdo_mapping() {
    let tpdo = pdo_mapping(Direction::Output, &["timestamp", "actual_q", "robot_mode"]).unwrap();
    let values: Vec<u32> = tpdo.iter().map(|e| e.mapping_value()).collect();
    assert_eq!(
        values,
        [
            0x2000_0040,
            0x2006_0140,
            0x2006_0240,
            0x2006_0340,
            0x2006_0440,
            0x2006_0540,
            0x2006_0640,
            0x2019_0020
        ]
    );
    // The mapping's bits are the data package's payload, byte for byte.
    let bits: u32 = tpdo.iter().map(|e| u32::from(e.bits)).sum();
    assert_eq!(bits, (8 + 48 + 4) * 8);
    let rpdo = pdo_mapping(Direction::Input, &["input_bit_register_64"]).unwrap();
    assert_eq!(rpdo[0].mapping_value(), 0x400E_0008);
    assert_eq!(
        pdo_mapping(Direction::Input, &["actual_q"]),
        Err("actual_q")
    );
}

#[test]
fn the_csv_round_trips() {
    let rows = dictionary::rows();
    let csv = dictionary::to_csv(&rows);
    assert_eq!(dictionary::from_csv(&csv), Ok(rows.clone()));
    assert!(csv.starts_with("index,subindex,name,object_code,data_type,access,"));
    // Units with commas are quoted, and come back whole.
    assert!(csv.contains("\"m, rad\""), "a pose's unit is quoted");
    let pose = rows
        .iter()
        .find(|r| r.name == "actual_TCP_pose[0]")
        .unwrap();
    assert_eq!(pose.unit, "m, rad");
    // One row per VAR, 1 + n per ARRAY.
    let arrays = rtde_fields::dictionary().filter(|o| o.elements() > 0);
    let extra: usize = arrays.map(|o| usize::from(o.elements())).sum();
    assert_eq!(rows.len(), 581 + extra);
    assert!(dictionary::from_csv("nope\n").is_err());
    let short = csv.lines().take(1).collect::<Vec<_>>().join("\n") + "\n2000h,00h\n";
    assert_eq!(dictionary::from_csv(&short).unwrap_err().line, 2);
}
