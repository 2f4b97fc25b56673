//! The command program's registers as derived recipes, one pair per
//! [`CommandLayout`]: the derive checks every name against the registry, as it does every
//! recipe, and a test checks that the names are the layout's.

use rtde_core::{
    FromPayload, InputRecipe, PayloadError, Recipe, RecipeSpec, RtdeRecipe, StaticRecipe,
};
use rtde_robot_proto::programs::command::CommandLayout;
use rtde_robot_proto::programs::command::{DOUBLE_INPUTS, int_in};

/// What the motion API reads from the robot every cycle, whichever the layout.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Observed {
    pub(crate) timestamp: f64,
    pub(crate) q: [f64; 6],
    pub(crate) qd: [f64; 6],
    pub(crate) tcp_pose: [f64; 6],
    pub(crate) runtime_state: u32,
    pub(crate) safety_mode: i32,
    /// Output ints: accepted, done, state, failure.
    pub(crate) ints: [i32; 4],
    pub(crate) progress: f64,
}

/// The registers the client writes: ints and doubles, from the layout's bases.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Registers {
    pub(crate) ints: [i32; int_in::COUNT as usize],
    pub(crate) doubles: [f64; DOUBLE_INPUTS as usize],
}

macro_rules! layout_recipes {
    ($command:ident, $state:ident, $ints_in:literal, $doubles_in:literal, $ints_out:literal,
     $progress:literal $(, $allow:ident)?) => {
        /// The command registers of one layout.
        #[derive(RtdeRecipe, Clone, Copy, Debug, Default)]
        #[rtde(input)]
        pub(crate) struct $command {
            #[rtde(registers = $ints_in $(, $allow)?)]
            pub(crate) ints: [i32; 10],
            #[rtde(registers = $doubles_in $(, $allow)?)]
            pub(crate) doubles: [f64; 18],
        }

        /// The state the motion API reads, with the program registers of one layout.
        #[derive(RtdeRecipe, Clone, Copy, Debug)]
        pub(crate) struct $state {
            pub(crate) timestamp: f64,
            pub(crate) actual_q: [f64; 6],
            pub(crate) actual_qd: [f64; 6],
            #[rtde(name = "actual_TCP_pose")]
            pub(crate) actual_tcp_pose: [f64; 6],
            pub(crate) runtime_state: u32,
            pub(crate) safety_mode: i32,
            #[rtde(registers = $ints_out)]
            pub(crate) ints: [i32; 4],
            #[rtde(name = $progress)]
            pub(crate) progress: f64,
        }

        impl From<$state> for Observed {
            fn from(s: $state) -> Observed {
                Observed {
                    timestamp: s.timestamp,
                    q: s.actual_q,
                    qd: s.actual_qd,
                    tcp_pose: s.actual_tcp_pose,
                    runtime_state: s.runtime_state,
                    safety_mode: s.safety_mode,
                    ints: s.ints,
                    progress: s.progress,
                }
            }
        }

        impl From<Registers> for $command {
            fn from(r: Registers) -> $command {
                $command {
                    ints: r.ints,
                    doubles: r.doubles,
                }
            }
        }
    };
}

layout_recipes!(
    UpperCommand,
    UpperState,
    "input_int_register_30..=39",
    "input_double_register_30..=47",
    "output_int_register_30..=33",
    "output_double_register_30"
);

layout_recipes!(
    LowerCommand,
    LowerState,
    "input_int_register_0..=9",
    "input_double_register_0..=17",
    "output_int_register_0..=3",
    "output_double_register_0",
    allow_fieldbus_registers
);

/// The names of a layout's recipes: inputs, then the program's outputs.
#[cfg(test)]
pub(crate) fn names(layout: CommandLayout) -> (Vec<&'static str>, Vec<&'static str>) {
    let (outputs, inputs) = specs(layout);
    (inputs.names().to_vec(), outputs.names().to_vec())
}

/// A layout's recipes: the state the motion API reads, and the registers it writes.
pub(crate) fn specs(layout: CommandLayout) -> (RecipeSpec<'static>, RecipeSpec<'static>) {
    if layout == CommandLayout::LOWER {
        (LowerState::SPEC, LowerCommand::SPEC)
    } else {
        (UpperState::SPEC, UpperCommand::SPEC)
    }
}

/// The registers as the input recipe of their layout, which every driver sends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Written {
    Upper(UpperCommand),
    Lower(LowerCommand),
}

impl Written {
    pub(crate) fn new(layout: CommandLayout, registers: Registers) -> Written {
        if layout == CommandLayout::LOWER {
            Written::Lower(registers.into())
        } else {
            Written::Upper(registers.into())
        }
    }
}

impl Recipe for Written {
    fn spec(&self) -> RecipeSpec<'_> {
        match self {
            Written::Upper(r) => r.spec(),
            Written::Lower(r) => r.spec(),
        }
    }
}

impl InputRecipe for Written {
    fn encode_into(&self, out: &mut [u8]) -> Result<usize, PayloadError> {
        match self {
            Written::Upper(r) => r.encode_into(out),
            Written::Lower(r) => r.encode_into(out),
        }
    }
}

/// Decodes a state package of `layout`'s recipe.
pub(crate) fn observe(layout: CommandLayout, payload: &[u8]) -> Result<Observed, rtde_core::Error> {
    Ok(if layout == CommandLayout::LOWER {
        LowerState::from_payload_as::<rtde_core::Error>(payload)?.into()
    } else {
        UpperState::from_payload_as::<rtde_core::Error>(payload)?.into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recipes_are_the_layouts_registers() {
        for layout in [CommandLayout::UPPER, CommandLayout::LOWER] {
            let (inputs, outputs) = names(layout);
            assert_eq!(inputs, layout.input_names(), "{layout:?}");
            // The program's outputs close the state recipe.
            assert_eq!(
                outputs[outputs.len() - 5..],
                layout.output_names(),
                "{layout:?}"
            );
        }
    }
}
