//! `#[rtde(crate = "…")]` with rtde-core renamed to `rtde`, and behind a re-export.

/// A re-export, as a crate wrapping rtde would offer it.
pub mod robot {
    pub use rtde as rtde_reexported;
}

#[cfg(test)]
mod tests {
    use rtde::{FromPayload, RecipeView, RobotMode, StaticRecipe, ToPayload};

    #[derive(rtde::RtdeRecipe)]
    #[rtde(crate = "rtde")]
    struct Renamed {
        timestamp: f64,
        robot_mode: RobotMode,
    }

    #[derive(rtde::RtdeRecipe)]
    #[rtde(input, crate = "crate::robot::rtde_reexported")]
    struct Reexported {
        input_int_register_24: i32,
    }

    #[test]
    fn derives_through_the_given_path() {
        assert_eq!(Renamed::SPEC.names(), ["timestamp", "robot_mode"]);
        let mut payload = [0u8; 12];
        payload[8..].copy_from_slice(&7i32.to_be_bytes());
        let r = Renamed::from_payload(&payload).unwrap();
        assert_eq!((r.timestamp, r.robot_mode), (0.0, RobotMode::Running));
        assert_eq!(
            Renamed::view(&payload).unwrap().robot_mode(),
            RobotMode::Running
        );
        let bytes = Reexported {
            input_int_register_24: -2,
        }
        .to_payload();
        assert_eq!(bytes, (-2i32).to_be_bytes());
    }
}
