//! The blocking client against a scripted fake controller over loopback: the checks
//! before setup, a refused recipe, input recipes. The handshake and its faults, and what
//! goes wrong on the link and on the controller after it (timeouts, broken links, foreign
//! packages, gaps, reconnection), are the suite over every driver and every way in,
//! `tests/drivers.rs`; how a setup reply is read is the session's (its byte-level tests).

use rtde_testkit::scripted as support;

use std::time::Duration;

use rtde_core::protocol::{ClientMessage, ControllerMessage};
use rtde_core::{Client, ConnectOptions, DynamicRecipe, Error, ErrorKind, Recipe, Value};
use support::{FakePeer, Script};

fn options() -> ConnectOptions {
    ConnectOptions::new().read_timeout(Some(Duration::from_secs(5)))
}

fn outputs() -> DynamicRecipe {
    DynamicRecipe::outputs(["timestamp", "actual_q"]).unwrap()
}

#[test]
fn a_refused_output_recipe_is_not_used() {
    // How the reply's NOT_FOUND is read is the session's rule (its byte-level tests).
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_outputs(
                500.0,
                "timestamp,actual_q,target_q",
                0,
                "DOUBLE,VECTOR6D,NOT_FOUND",
            )
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "target_q"]).unwrap();
    let err = client.setup_outputs(recipe.spec(), 500.0).unwrap_err();
    assert!(matches!(err, Error::SetupRefused(_)), "{err}");
    // Nothing to receive.
    assert!(matches!(client.recv(), Err(Error::Misuse(_))));
    drop(client);
    peer.finish();
}

#[test]
fn a_setup_refused_as_a_whole_carries_the_controllers_text() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(500.0),
                names: "timestamp,actual_q",
            })
            // No type for any field: the request was refused whole, and the text says why.
            .text("the capture was recorded at 125 Hz")
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(0),
                types: "",
            })
            .expect(ClientMessage::SetupOutputs {
                frequency: Some(500.0),
                names: "timestamp,actual_q",
            })
            .reply(ControllerMessage::SetupOutputsReply {
                recipe_id: Some(0),
                types: "",
            })
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let err = client.setup_outputs(outputs().spec(), 500.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Refused);
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.reason(), Some("the capture was recorded at 125 Hz"));
    assert_eq!(
        err.to_string(),
        "the controller refused the output recipe as a whole: \"the capture was recorded at 125 Hz\""
    );
    // Without a text message during this request, no earlier text is taken for the reason.
    let err = client.setup_outputs(outputs().spec(), 500.0).unwrap_err();
    let Error::SetupRefused(refused) = &err else {
        panic!("{err}")
    };
    assert_eq!(refused.reason(), None);
    assert!(
        err.to_string()
            .ends_with("without naming a field; `Client::text_messages` may say why"),
        "{err}"
    );
    drop(client);
    peer.finish();
}

#[test]
fn a_version_too_old_is_refused_before_any_setup_is_sent() {
    // The peer fails the test if a SETUP_OUTPUTS or SETUP_INPUTS arrives.
    let peer = FakePeer::start(Script::new().handshake_v2("3.8.0").expect_eof());
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let recipe =
        DynamicRecipe::outputs(["timestamp", "ft_raw_wrench", "input_int_register_30"]).unwrap();
    let err = client.setup_outputs(recipe.spec(), 125.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unsupported);
    assert_eq!(
        err.to_string(),
        "the controller cannot provide 2 of the requested output fields: `ft_raw_wrench` \
         requires e-Series 5.9.0 (controller is CB3 3.8.0); `input_int_register_30` requires CB3 \
         3.9.0 (controller is CB3 3.8.0); remove them from the recipe or update the controller"
    );
    let Error::Unavailable(missing) = &err else {
        panic!()
    };
    let needs: Vec<_> = missing
        .fields()
        .iter()
        .map(|f| (f.name(), f.needs().unwrap().to_string()))
        .collect();
    assert_eq!(
        needs,
        [
            ("ft_raw_wrench", "5.9.0".to_string()),
            ("input_int_register_30", "3.9.0".to_string())
        ]
    );

    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let err = client.setup_inputs(inputs.spec()).unwrap_err();
    assert!(matches!(err, Error::Unavailable(_)), "{err}");

    // CB3 streams at 125 Hz at most; checked before sending too.
    let err = client.setup_outputs(outputs().spec(), 500.0).unwrap_err();
    assert!(
        matches!(err, Error::FrequencyTooHigh { max, .. } if max == 125.0),
        "{err}"
    );
    let err = client
        .setup_outputs(outputs().spec(), f64::NAN)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    drop(client);
    peer.finish();
}

#[test]
fn several_input_recipes_each_with_its_id() {
    let peer = FakePeer::start(
        Script::new()
            .handshake_v2("5.21.0")
            .setup_inputs("input_int_register_24", 1, "INT32")
            .setup_inputs(
                "input_double_register_24,input_bit_register_64",
                2,
                "DOUBLE,BOOL",
            )
            .expect(ClientMessage::DataPackage {
                recipe_id: 2,
                payload: &[0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 1],
            })
            .expect(ClientMessage::DataPackage {
                recipe_id: 1,
                payload: &[0xff, 0xff, 0xff, 0xfe],
            })
            .expect_eof(),
    );
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let mut a = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    let mut b =
        DynamicRecipe::inputs(["input_double_register_24", "input_bit_register_64"]).unwrap();
    let ha = client.setup_inputs(a.spec()).unwrap();
    let hb = client.setup_inputs(b.spec()).unwrap();
    assert_eq!(
        (client.input_recipe_id(&ha), client.input_recipe_id(&hb)),
        (Some(1), Some(2))
    );
    a.set("input_int_register_24", Value::Int32(-2)).unwrap();
    b.set("input_double_register_24", Value::Double(1.5))
        .unwrap();
    b.set("input_bit_register_64", Value::Bool(true)).unwrap();
    // A recipe that is not the handle's is refused before anything is sent.
    assert!(matches!(client.send(&ha, &b), Err(Error::Misuse(_))));
    client.send(&hb, &b).unwrap();
    client.send(&ha, &a).unwrap();
    drop(client);
    peer.finish();
}

#[test]
fn invalid_recipes_are_refused_before_sending() {
    let peer = FakePeer::start(Script::new().handshake_v2("5.21.0").expect_eof());
    let mut client = Client::connect(peer.addr, options()).unwrap();
    // An input spec for outputs, and a hand-made spec the registry disagrees with.
    let inputs = DynamicRecipe::inputs(["input_int_register_24"]).unwrap();
    assert!(matches!(
        client.setup_outputs(inputs.spec(), 500.0),
        Err(Error::Misuse(_))
    ));
    let spec = rtde_core::RecipeSpec::new(
        rtde_core::fields::Direction::Output,
        &["timestamp", "actual_tcp_pose"],
        &[
            rtde_core::fields::WireType::Double,
            rtde_core::fields::WireType::Vector6d,
        ],
    );
    let err = client.setup_outputs(spec, 500.0).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Usage);
    assert!(
        err.to_string()
            .contains("unknown output field `actual_tcp_pose` (did you mean `actual_TCP_pose`?)"),
        "{err}"
    );
    drop(client);
    peer.finish();
}

#[test]
fn connecting_to_a_closed_port_is_a_link_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = Client::connect(addr, options()).unwrap_err();
    assert!(matches!(err, Error::Connect { .. }), "{err}");
    assert_eq!(err.kind(), ErrorKind::Link);
    assert!(
        err.to_string()
            .starts_with(&format!("could not connect to {addr}: "))
    );
    // Nothing listens: on a robot that is on, RTDE is probably switched off.
    assert!(
        err.to_string()
            .contains("RTDE may be disabled in the robot's security settings"),
        "{err}"
    );
}

#[test]
fn a_name_list_over_2048_bytes_is_refused_before_sending() {
    let peer = FakePeer::start(Script::new().handshake_v2("5.21.0").expect_eof());
    let mut client = Client::connect(peer.addr, options()).unwrap();
    let all = rtde_core::fields::fields(rtde_core::fields::Direction::Output);
    let names: Vec<&'static str> = all.iter().map(|f| f.name()).collect();
    let types: Vec<_> = all.iter().map(|f| f.wire_type()).collect();
    let spec = rtde_core::RecipeSpec::new(rtde_core::fields::Direction::Output, &names, &types);
    assert!(
        spec.name_list_len() > 2048,
        "the registry's outputs no longer fill 2 KiB"
    );
    let err = client.setup_outputs(spec, 500.0).unwrap_err();
    let Error::Recipe(recipe) = &err else {
        panic!("{err}")
    };
    assert!(
        recipe.problems().iter().any(|p| matches!(
            p,
            rtde_core::RecipeProblem::NameListTooLong { len } if *len == spec.name_list_len()
        )),
        "{err}"
    );
    drop(client);
    peer.finish();
}
