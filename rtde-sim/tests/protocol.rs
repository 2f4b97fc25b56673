//! The simulator's controller behaviour at the protocol level, in both protocol versions:
//! handshake, setups, refusals, recipe ids, decimation, start and pause, input ownership
//! and inputs that take effect.

mod common;

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use common::{Msg, Raw, double, outputs, tick_of};
use rtde_core::fields::{ControllerVersion, Direction, MAX_NAME_LIST_BYTES, fields};
use rtde_core::protocol::{ClientMessage, MessageLevel, ProtocolVersion};
use rtde_core::{DynamicRecipe, Value};
use rtde_sim::Sim;

const WAIT: Duration = Duration::from_secs(5);

fn sim(version: &str) -> Sim {
    Sim::builder()
        .controller_version(version)
        .deterministic()
        .unpaced()
        .start()
        .unwrap()
}

#[test]
fn negotiates_v1_and_v2_and_answers_every_version_query() {
    let sim = sim("5.21.0");
    for v in [1, 2] {
        let mut c = Raw::connect(sim.addr());
        // Asking before negotiating is allowed, and asking twice gets the same answer.
        for _ in 0..2 {
            c.send(ClientMessage::GetUrcontrolVersion);
            assert_eq!(
                c.recv(),
                Msg::Urcontrol(ControllerVersion::new(5, 21, 0, 0))
            );
        }
        assert!(c.negotiate(v));
        assert!(c.negotiate(v), "a repeated request is accepted too");
        for version in [0, 3, 99] {
            assert!(!c.negotiate(version), "v{version} does not exist");
        }
        c.send(ClientMessage::GetUrcontrolVersion);
        assert!(matches!(c.recv(), Msg::Urcontrol(_)));
    }
}

#[test]
fn a_v1_only_controller_refuses_v2_and_streams_v1() {
    let sim = Sim::builder()
        .controller_version("3.15.8.106339")
        .v1_only()
        .deterministic()
        .unpaced()
        .start()
        .unwrap();
    let mut c = Raw::connect(sim.addr());
    assert!(!c.negotiate(2));
    assert!(c.negotiate(1));
    c.send(ClientMessage::GetUrcontrolVersion);
    assert_eq!(
        c.recv(),
        Msg::Urcontrol(ControllerVersion::new(3, 15, 8, 106_339))
    );
    // v1: no frequency, no recipe id in the reply or in data packages.
    let (texts, id, types) = c.setup_outputs(0.0, "timestamp,actual_q");
    assert_eq!(
        (texts.len(), id, types.as_str()),
        (0, None, "DOUBLE,VECTOR6D")
    );
    c.start();
    let mut recipe = outputs(&["timestamp", "actual_q"]);
    for expected_tick in 0..5 {
        assert_eq!(c.recv_data(&mut recipe), None);
        // v1 streams at the control-loop rate: 125 Hz on CB3.
        assert_eq!(tick_of(double(&recipe, "timestamp"), 125), expected_tick);
    }
}

#[test]
fn setup_replies_carry_the_registry_wire_type_of_every_output_field() {
    for version in ["3.15.8", "5.21.0", "10.12.0"] {
        let sim = sim(version);
        let controller: ControllerVersion = version.parse().unwrap();
        let available: Vec<_> = fields(Direction::Output)
            .iter()
            .filter(|f| f.is_available_on(controller))
            .collect();
        assert!(available.len() > 100, "{version}: {}", available.len());
        for protocol in [1, 2] {
            let mut c = Raw::connect_v(sim.addr(), protocol);
            // As many recipes as it takes to stay within the name-list limit.
            let mut rest = &available[..];
            while !rest.is_empty() {
                let mut take = 0;
                let mut len = 0;
                while take < rest.len() && len + rest[take].name().len() < MAX_NAME_LIST_BYTES {
                    len += rest[take].name().len() + 1;
                    take += 1;
                }
                let (chunk, next) = rest.split_at(take);
                rest = next;
                let names: Vec<&str> = chunk.iter().map(|f| f.name()).collect();
                let expected: Vec<&str> = chunk.iter().map(|f| f.wire_type().as_str()).collect();
                let (texts, id, types) =
                    c.setup_outputs(500.0_f64.min(f64::from(sim.loop_rate())), &names.join(","));
                assert!(texts.is_empty(), "{version} v{protocol}: {texts:?}");
                assert_eq!(types, expected.join(","), "{version} v{protocol}");
                assert_eq!(id.is_some(), protocol == 2);
                // One data package of this recipe has the size the types add up to.
                c.start();
                let Msg::Data { payload, .. } = c.recv() else {
                    panic!("expected a data package")
                };
                let size: usize = chunk.iter().map(|f| f.wire_type().size()).sum();
                assert_eq!(payload.len(), size);
                c.pause();
            }
        }
    }
}

#[test]
fn names_unknown_to_the_version_are_not_found_and_the_recipe_is_refused() {
    let cb3 = sim("3.15.8");
    for protocol in [1u16, 2] {
        let mut c = Raw::connect_v(cb3.addr(), protocol);
        let (_, good, _) = c.setup_outputs(125.0, "timestamp");
        // ft_raw_wrench came with e-Series 5.9; names are case-sensitive on the wire.
        let (texts, id, types) = c.setup_outputs(
            125.0,
            "timestamp,ft_raw_wrench,no_such_field,actual_tcp_pose",
        );
        assert_eq!(types, "DOUBLE,NOT_FOUND,NOT_FOUND,NOT_FOUND");
        assert_eq!(id, (protocol == 2).then_some(0));
        assert_eq!(texts.len(), 1);
        for name in ["ft_raw_wrench", "no_such_field", "actual_tcp_pose"] {
            assert!(texts[0].contains(name), "{}", texts[0]);
        }
        assert!(texts[0].contains("does not exist on CB3"), "{}", texts[0]);
        // The refused recipe took no effect: the earlier one streams.
        c.start();
        let mut recipe = outputs(&["timestamp"]);
        assert_eq!(c.recv_data(&mut recipe), good);
    }
    let e_series = sim("5.9.0");
    let mut c = Raw::connect_v(e_series.addr(), 2);
    let (texts, id, types) = c.setup_outputs(500.0, "ft_raw_wrench");
    assert_eq!((texts.len(), id, types.as_str()), (0, Some(1), "VECTOR6D"));
    let older = sim("5.8.0");
    let mut c = Raw::connect_v(older.addr(), 2);
    let (texts, _, types) = c.setup_outputs(500.0, "ft_raw_wrench");
    assert_eq!(types, "NOT_FOUND");
    assert!(
        texts[0].contains("needs controller software 5.9.0 or later"),
        "{}",
        texts[0]
    );
    // Inputs too.
    let (texts, id, types) = c.setup_inputs("input_int_register_24,no_such_input");
    assert_eq!((id, types.as_str()), (0, "INT32,NOT_FOUND"));
    assert!(texts[0].contains("no_such_input"));
}

#[test]
fn a_trailing_comma_after_the_last_name_is_tolerated() {
    let sim = sim("5.21.0");
    for protocol in [1, 2] {
        let mut c = Raw::connect_v(sim.addr(), protocol);
        let (texts, _, types) = c.setup_outputs(500.0, "timestamp,actual_q,");
        assert_eq!((texts.len(), types.as_str()), (0, "DOUBLE,VECTOR6D"));
        // A register per connection: the one before may hold its own until the simulator
        // has seen it close.
        let (texts, id, types) = c.setup_inputs(&format!("input_int_register_{},", 23 + protocol));
        assert_eq!((texts.len(), id, types.as_str()), (0, 1, "INT32"));
    }
}

#[test]
fn name_lists_over_2048_bytes_are_refused_with_a_text_message() {
    let sim = sim("5.21.0");
    // 204 × "timestamp" + "actual_q", comma-separated: exactly 2048 bytes.
    let mut names = vec!["timestamp"; 204];
    names.push("actual_q");
    let at_limit = names.join(",");
    assert_eq!(at_limit.len(), MAX_NAME_LIST_BYTES);
    let over = format!("{at_limit},timestamp");
    for protocol in [1u16, 2] {
        let mut c = Raw::connect_v(sim.addr(), protocol);
        let (texts, id, types) = c.setup_outputs(500.0, &at_limit);
        assert!(texts.is_empty());
        assert_eq!(id.is_some_and(|id| id > 0), protocol == 2);
        assert_eq!(types.split(',').count(), 205);
        let (texts, id, types) = c.setup_outputs(500.0, &over);
        assert_eq!((id, types.as_str()), ((protocol == 2).then_some(0), ""));
        assert!(texts[0].contains("2058 bytes"), "{}", texts[0]);
        assert!(texts[0].contains("2048"), "{}", texts[0]);
        let inputs = vec!["input_int_register_24"; 100].join(",");
        let (texts, id, types) = c.setup_inputs(&inputs);
        assert_eq!((id, types.as_str()), (0, ""));
        assert!(texts[0].starts_with("input setup refused"), "{}", texts[0]);
        // A text message in the negotiated format: v2 names its source.
        c.send(ClientMessage::SetupInputs { names: "" });
        match c.recv() {
            Msg::Text { level, source, .. } => {
                assert_eq!(level, MessageLevel::Error);
                assert_eq!(source, if protocol == 2 { "RTDE" } else { "" });
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            c.recv(),
            Msg::SetupInputs {
                id: 0,
                types: String::new()
            }
        );
    }
}

#[test]
fn output_frequency_is_capped_at_the_control_loop_rate() {
    for (version, max) in [("3.15.8", 125.0), ("5.21.0", 500.0), ("10.12.0", 500.0)] {
        let sim = sim(version);
        let mut c = Raw::connect_v(sim.addr(), 2);
        let (texts, id, _) = c.setup_outputs(max, "timestamp");
        assert_eq!((texts.len(), id), (0, Some(1)));
        for bad in [max + 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            let (texts, id, types) = c.setup_outputs(bad, "timestamp");
            assert_eq!((id, types.as_str()), (Some(0), ""), "{version} {bad}");
            assert!(texts[0].contains("output frequency"), "{}", texts[0]);
        }
    }
}

#[test]
fn outputs_are_decimated_from_the_control_loop() {
    let e_series = sim("5.21.0");
    let cb3 = sim("3.15.8");
    // (simulator, loop rate, frequency, ticks between packages)
    let cases = [
        (&e_series, 500, 500.0, 1),
        (&e_series, 500, 250.0, 2),
        (&e_series, 500, 125.0, 4),
        (&e_series, 500, 300.0, 1), // floor(500 / 300) = floor(1.67), as the guide says
        (&e_series, 500, 10.0, 50),
        (&e_series, 500, 1.0, 500),
        (&cb3, 125, 125.0, 1),
        (&cb3, 125, 62.5, 2),
        (&cb3, 125, 10.0, 12), // floor(12.5)
        (&cb3, 125, 100.0, 1), // floor(1.25)
    ];
    for (sim, rate, frequency, every) in cases {
        let mut c = Raw::connect_v(sim.addr(), 2);
        let (_, id, _) = c.setup_outputs(frequency, "timestamp");
        c.start();
        let mut recipe = outputs(&["timestamp"]);
        let mut previous = None;
        for _ in 0..20 {
            assert_eq!(c.recv_data(&mut recipe), id);
            let ts = double(&recipe, "timestamp");
            let tick = tick_of(ts, rate);
            assert_eq!(tick % every, 0, "{frequency} Hz: tick {tick}");
            if let Some(p) = previous {
                assert_eq!(tick - p, every, "{frequency} Hz on {rate} Hz");
            }
            previous = Some(tick);
        }
    }
}

#[test]
fn at_125_hz_on_e_series_timestamps_step_by_exactly_8_ms() {
    let sim = sim("5.21.0");
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.setup_outputs(125.0, "timestamp");
    c.start();
    let mut recipe = outputs(&["timestamp"]);
    for k in 0..50u32 {
        c.recv_data(&mut recipe);
        // Tick 4k of a 500 Hz loop, computed as the simulator documents it.
        assert_eq!(double(&recipe, "timestamp"), f64::from(4 * k) / 500.0);
    }
}

#[test]
fn paced_streaming_keeps_to_the_wall_clock() {
    let sim = Sim::builder().controller_version("5.21.0").start().unwrap();
    let mut c = Raw::connect_v(sim.addr(), 2);
    c.setup_outputs(250.0, "timestamp");
    let sent_start = Instant::now();
    c.start();
    let mut recipe = outputs(&["timestamp"]);
    c.recv_data(&mut recipe);
    let first = tick_of(double(&recipe, "timestamp"), 500);
    let mut last = first;
    for _ in 0..25 {
        c.recv_data(&mut recipe);
        let tick = tick_of(double(&recipe, "timestamp"), 500);
        assert!(tick > last && tick.is_multiple_of(2), "{last} -> {tick}");
        last = tick;
    }
    // No package comes before its tick, and the first due tick is at most one 2 ms
    // period before START: so the ticks' span, less a period, bounds the wall time.
    let elapsed = sent_start.elapsed();
    let span = Duration::from_millis((last - first) * 2);
    assert!(last - first >= 50, "{first} -> {last}");
    assert!(
        elapsed + Duration::from_millis(2) >= span,
        "{elapsed:?} for {span:?}"
    );
}

#[test]
fn recipe_ids_count_up_and_input_ids_stop_at_255() {
    let sim = sim("5.21.0");
    let mut c = Raw::connect_v(sim.addr(), 2);
    for expected in 1..=3 {
        let (_, id, _) = c.setup_outputs(500.0, "timestamp");
        assert_eq!(id, Some(expected));
    }
    c.start();
    let Msg::Data { id, .. } = c.recv() else {
        panic!("expected data")
    };
    assert_eq!(id, Some(3), "the latest output recipe streams");
    c.pause();
    for expected in 1..=255u8 {
        let (texts, id, _) = c.setup_inputs("input_int_register_24");
        assert_eq!((texts.len(), id), (0, expected));
    }
    let (texts, id, types) = c.setup_inputs("input_int_register_25");
    assert_eq!((id, types.as_str()), (0, ""));
    assert!(texts[0].contains("1 to 255"), "{}", texts[0]);
}

#[test]
fn start_and_pause_reply_and_control_streaming() {
    let sim = sim("5.21.0");
    for protocol in [1, 2] {
        let mut c = Raw::connect_v(sim.addr(), protocol);
        // START with no output recipe is refused, with a text message saying why (the
        // RTDE guide: a client must subscribe to at least one output).
        c.send(ClientMessage::Start);
        let text = c.recv();
        assert!(text.text().contains("no output recipe"), "{text:?}");
        assert_eq!(c.recv(), Msg::Start(false));
        c.pause();
        let (_, first, _) = c.setup_outputs(500.0, "timestamp");
        c.start();
        assert!(matches!(c.recv(), Msg::Data { id, .. } if id == first));
        c.start(); // a second START is accepted too
        // No output setup while streaming.
        let frequency = (protocol == 2).then_some(500.0);
        c.send(ClientMessage::SetupOutputs {
            frequency,
            names: "actual_q",
        });
        let text = loop {
            match c.recv() {
                Msg::Data { .. } => {}
                text => break text,
            }
        };
        let texts = [text.text().to_owned()];
        let Msg::SetupOutputs { id, types } = c.recv() else {
            panic!("expected the refusal")
        };
        assert_eq!((id, types.as_str()), ((protocol == 2).then_some(0), ""));
        assert!(texts[0].contains("PAUSE"), "{}", texts[0]);
        c.pause();
        // Nothing follows the PAUSE reply.
        c.stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut byte = [0u8; 1];
        let quiet = std::io::Read::read(&mut c.stream, &mut byte);
        assert!(
            matches!(&quiet, Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)),
            "{quiet:?}"
        );
        c.stream
            .set_read_timeout(Some(common::READ_TIMEOUT))
            .unwrap();
        // A new recipe after pausing, then streaming resumes with it.
        let (_, second, types) = c.setup_outputs(500.0, "actual_q");
        assert_eq!(types, "VECTOR6D");
        c.start();
        let Msg::Data { id, payload } = c.recv() else {
            panic!("expected data")
        };
        assert_eq!((id, payload.len()), (second, 48));
        // Pausing before closing is what well-behaved clients do.
        c.pause();
    }
    assert!(sim.wait_for_connections(0, WAIT));
}

#[test]
fn one_owner_per_input_across_connections_released_on_disconnect() {
    let sim = sim("5.21.0");
    for protocol in [1, 2] {
        let mut a = Raw::connect_v(sim.addr(), protocol);
        let mut b = Raw::connect_v(sim.addr(), protocol);
        let (_, id, types) = a.setup_inputs("input_int_register_24,input_double_register_24");
        assert_eq!((id, types.as_str()), (1, "INT32,DOUBLE"));
        // The same connection may name its own inputs again.
        let (_, id, _) = a.setup_inputs("input_int_register_24");
        assert_eq!(id, 2);
        let (texts, id, types) = b.setup_inputs("input_int_register_25,input_double_register_24");
        assert_eq!((id, types.as_str()), (0, "INT32,IN_USE"));
        assert!(texts[0].contains("`input_double_register_24` is in use by another RTDE client"));
        assert!(!texts[0].contains("input_int_register_25"));
        // Nothing of the refused recipe was claimed: a third client gets register 25.
        let mut c = Raw::connect_v(sim.addr(), protocol);
        let (_, id, _) = c.setup_inputs("input_int_register_25");
        assert_eq!(id, 1);
        drop(c);
        a.pause();
        drop(a);
        assert!(sim.wait_for_connections(1, WAIT));
        let (texts, id, types) = b.setup_inputs("input_int_register_25,input_double_register_24");
        assert_eq!((texts.len(), id, types.as_str()), (0, 1, "INT32,DOUBLE"));
        drop(b);
        assert!(sim.wait_for_connections(0, WAIT));
    }
}

#[test]
fn a_fieldbus_adapter_holds_the_reserved_register_ranges() {
    let with = Sim::builder().fieldbus_adapter().unpaced().start().unwrap();
    let without = sim("5.21.0");
    let reserved = [
        "input_int_register_0",
        "input_int_register_23",
        "input_double_register_0",
        "input_double_register_23",
        "input_bit_registers0_to_31",
        "input_bit_registers32_to_63",
    ];
    let free = [
        "input_int_register_24",
        "input_double_register_47",
        "input_bit_register_64",
    ];
    for name in reserved {
        let mut c = Raw::connect_v(with.addr(), 2);
        let (texts, id, types) = c.setup_inputs(name);
        assert_eq!((id, types.as_str()), (0, "IN_USE"), "{name}");
        assert!(texts[0].contains("fieldbus"), "{}", texts[0]);
        let mut c = Raw::connect_v(without.addr(), 2);
        assert_eq!(c.setup_inputs(name).1, 1, "{name} without an adapter");
    }
    let mut c = Raw::connect_v(with.addr(), 2);
    assert_eq!(c.setup_inputs(&free.join(",")).1, 1);
}

#[test]
fn inputs_take_effect_and_read_back_as_outputs() {
    let sim = sim("5.21.0");
    for protocol in [1, 2] {
        let mut writer = Raw::connect_v(sim.addr(), protocol);
        let names = [
            "input_int_register_24",
            "input_double_register_30",
            "input_bit_register_70",
            "input_bit_registers32_to_63",
            "standard_digital_output_mask",
            "standard_digital_output",
            "speed_slider_mask",
            "speed_slider_fraction",
        ];
        let (texts, id, _) = writer.setup_inputs(&names.join(","));
        assert!(texts.is_empty(), "{texts:?}");
        let mut inputs = DynamicRecipe::inputs(names).unwrap();
        let set = |r: &mut DynamicRecipe, n: &str, v: Value| r.set(n, v).unwrap();
        set(
            &mut inputs,
            "input_int_register_24",
            Value::Int32(-42 - i32::from(protocol)),
        );
        set(&mut inputs, "input_double_register_30", Value::Double(2.5));
        set(&mut inputs, "input_bit_register_70", Value::Bool(true));
        set(
            &mut inputs,
            "input_bit_registers32_to_63",
            Value::Uint32(0x8000_0001),
        );
        set(
            &mut inputs,
            "standard_digital_output_mask",
            Value::Uint8(0b0000_0101),
        );
        set(
            &mut inputs,
            "standard_digital_output",
            Value::Uint8(0b1111_1111),
        );
        set(&mut inputs, "speed_slider_mask", Value::Uint32(0));
        set(&mut inputs, "speed_slider_fraction", Value::Double(0.3));
        // Input packages are applied without START (see `inputs_take_effect_…_paused`), in
        // order with the other requests: the version reply comes once they are.
        writer.send_inputs(id, &inputs);
        version_reply(&mut writer);

        let read = [
            "input_int_register_24",
            "input_double_register_30",
            "input_bit_register_70",
            "input_bit_registers32_to_63",
            "actual_digital_output_bits",
            "target_speed_fraction",
        ];
        let mut reader = Raw::connect_v(sim.addr(), 3 - protocol);
        let (texts, _, _) = reader.setup_outputs(500.0, &read.join(","));
        assert!(texts.is_empty(), "{texts:?}");
        reader.start();
        let mut out = outputs(&read);
        reader.recv_data(&mut out);
        let expected = [
            Value::Int32(-42 - i32::from(protocol)),
            Value::Double(2.5),
            Value::Bool(true),
            Value::Uint32(0x8000_0001),
            Value::Uint64(0b101),
            // The slider moves only with bit 0 of its mask.
            Value::Double(1.0),
        ];
        assert_eq!(out.values(), expected);
        reader.pause();

        // Now the slider's mask, and digital outputs under a narrower mask.
        set(&mut inputs, "speed_slider_mask", Value::Uint32(1));
        set(
            &mut inputs,
            "standard_digital_output_mask",
            Value::Uint8(0b0000_0100),
        );
        set(&mut inputs, "standard_digital_output", Value::Uint8(0));
        writer.send_inputs(id, &inputs);
        version_reply(&mut writer);
        reader.start();
        reader.recv_data(&mut out);
        assert_eq!(
            out.get("actual_digital_output_bits"),
            Some(&Value::Uint64(0b001))
        );
        assert_eq!(out.get("target_speed_fraction"), Some(&Value::Double(0.3)));
        // The simulator's own view agrees.
        assert_eq!(sim.io().digital_output_bits(), 0b001);
        assert_eq!(
            sim.io().input("input_double_register_30"),
            Some(&Value::Double(2.5))
        );
        // Reset for the other protocol version's round.
        set(&mut inputs, "speed_slider_fraction", Value::Double(1.0));
        set(
            &mut inputs,
            "standard_digital_output_mask",
            Value::Uint8(0xff),
        );
        writer.send_inputs(id, &inputs);
        version_reply(&mut writer);
        // The next round claims the same inputs: wait until the simulator has released them.
        drop((writer, reader));
        assert!(sim.wait_for_connections(0, Duration::from_secs(5)));
    }
}

/// Asks for the controller's version and waits for the reply, passing over data packages.
fn version_reply(c: &mut Raw) {
    c.send(ClientMessage::GetUrcontrolVersion);
    loop {
        match c.recv() {
            Msg::Data { .. } => {}
            Msg::Urcontrol(_) => return,
            other => panic!("expected the version reply, got {other:?}"),
        }
    }
}

#[test]
fn inputs_take_effect_before_start_while_streaming_and_while_paused() {
    let sim = sim("5.21.0");
    let mut c = Raw::connect_v(sim.addr(), 2);
    let (_, id, _) = c.setup_inputs("input_int_register_24");
    let mut inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let mut write = |c: &mut Raw, v: i32| {
        inputs
            .set("input_int_register_24", Value::Int32(v))
            .unwrap();
        c.send_inputs(id, &inputs);
        version_reply(c);
        sim.io().input("input_int_register_24").cloned()
    };
    // As ur_rtde's IO interface does on real robots: inputs, never a START.
    assert_eq!(write(&mut c, 7), Some(Value::Int32(7)));
    c.setup_outputs(10.0, "timestamp");
    c.start();
    assert_eq!(write(&mut c, 8), Some(Value::Int32(8)));
    c.pause();
    assert_eq!(write(&mut c, 9), Some(Value::Int32(9)));
}

/// A client that leaves Nagle's algorithm on (ur_rtde's IO interface does) sends a second
/// small package only once the first is acknowledged; a receiver that delays its
/// acknowledgement (Linux: up to 40 ms) would hold the second input that long.
#[test]
fn back_to_back_inputs_from_a_client_without_nodelay_take_effect_at_once() {
    let sim = sim("5.21.0");
    let lags: Vec<Duration> = (0..3)
        .map(|round| {
            // A register of its own each round: the last round's connection may still hold
            // its register until the simulator has seen it close, and then answers IN_USE.
            let register = format!("input_int_register_{}", 24 + round);
            let mut c = Raw::connect_v(sim.addr(), 2);
            c.stream.set_nodelay(false).unwrap();
            let (texts, id, types) = c.setup_inputs(&register);
            assert_eq!(types, "INT32", "{register} was refused: {texts:?}");
            let mut inputs = DynamicRecipe::inputs([register.as_str()]).unwrap();
            let mut write = |v: i32| {
                inputs.set(&register, Value::Int32(v)).unwrap();
                c.send_inputs(id, &inputs);
            };
            let (first, second) = (100 * round + 1, 100 * round + 2);
            write(first);
            let sent = Instant::now();
            write(second);
            while sim.io().input(&register) != Some(&Value::Int32(second)) {
                assert!(sent.elapsed() < WAIT, "the second input never took effect");
                std::thread::sleep(Duration::from_micros(200));
            }
            sent.elapsed()
        })
        .collect();
    // Each round is a new connection, whose first exchange the delay would hit: the
    // fastest of three rounds still waited a delayed acknowledgement if any did.
    let fastest = lags.iter().min().unwrap();
    assert!(
        *fastest < Duration::from_millis(20),
        "the second of two back-to-back inputs took effect {lags:?} after it was sent"
    );
}

#[test]
fn bad_input_packages_are_ignored_with_one_text_message() {
    let sim = sim("5.21.0");
    let mut c = Raw::connect_v(sim.addr(), 2);
    let (_, id, _) = c.setup_inputs("input_int_register_24");
    for _ in 0..3 {
        c.send(ClientMessage::DataPackage {
            recipe_id: 9,
            payload: &[0, 0, 0, 1],
        });
        c.send(ClientMessage::DataPackage {
            recipe_id: id,
            payload: &[0, 1],
        });
    }
    c.send(ClientMessage::GetUrcontrolVersion);
    let text = c.recv();
    assert!(text.text().contains("recipe 9"), "{text:?}");
    assert!(matches!(c.recv(), Msg::Urcontrol(_)), "only one warning");
    assert_eq!(sim.io().input("input_int_register_24"), None);
    assert_eq!(c.version, ProtocolVersion::V2);
}

#[test]
fn a_package_that_does_not_decode_is_refused_with_a_text_message() {
    let sim = sim("5.21.0");
    let mut c = Raw::connect(sim.addr());
    // REQUEST_PROTOCOL_VERSION with a one-byte payload instead of a u16.
    c.send_bytes(&[0, 4, b'V', 2]);
    let text = c.recv();
    assert!(text.text().contains("REQUEST_PROTOCOL_VERSION"), "{text:?}");
    assert_eq!(c.recv(), Msg::Version(false));
    // The connection carries on.
    assert!(c.negotiate(2));
}

#[test]
fn a_byte_stream_that_is_no_rtde_is_answered_with_a_text_and_a_close() {
    let sim = sim("5.21.0");
    let mut c = Raw::connect_v(sim.addr(), 2);
    // A size field below the 3-byte header: the stream cannot be resynchronised.
    c.send_bytes(&[0, 2, b'V']);
    let text = c.recv();
    assert!(
        text.text().starts_with("closing the connection"),
        "{text:?}"
    );
    assert_eq!(c.try_recv(), None);
    assert!(sim.wait_for_connections(0, WAIT));
}

#[test]
fn a_tiny_output_frequency_never_overflows_the_tick_count() {
    // floor(500 / 1e-300) is far beyond u64: one package at tick 0, one at the largest
    // tick there is, and then none is ever due. The connection must stay usable (a panic
    // would close it, and keep its inputs owned).
    let sim = sim("5.21.0");
    let mut c = Raw::connect_v(sim.addr(), 2);
    let (texts, id, _) = c.setup_outputs(1e-300, "timestamp");
    assert_eq!((texts.len(), id), (0, Some(1)));
    let (_, input_id, _) = c.setup_inputs("input_int_register_24");
    assert_eq!(input_id, 1);
    c.start();
    let mut recipe = outputs(&["timestamp"]);
    c.recv_data(&mut recipe);
    assert_eq!(double(&recipe, "timestamp"), 0.0);
    c.pause();
    // A normal recipe after that: the connection's clock is past every multiple of 2.
    let (_, id, _) = c.setup_outputs(250.0, "timestamp");
    assert_eq!(id, Some(2));
    c.start();
    c.pause();
    assert_eq!(c.setup_outputs(500.0, "timestamp").1, Some(3));
    drop(c);
    assert!(sim.wait_for_connections(0, WAIT));
    let mut other = Raw::connect_v(sim.addr(), 2);
    assert_eq!(other.setup_inputs("input_int_register_24").1, 1, "released");
}
