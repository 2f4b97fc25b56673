//! The controller's user roles and operational modes: what the Dashboard's role and mode
//! commands take, and what their replies say.

use std::str::FromStr;

/// A CB3 user role (`setUserRole`, `getUserRole`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UserRole {
    /// Full access.
    Programmer,
    /// Runs programs; cannot edit them.
    Operator,
    /// No role set.
    None,
    /// Everything locked.
    Locked,
    /// Restricted access.
    Restricted,
}

impl UserRole {
    const ALL: [UserRole; 5] = [
        UserRole::Programmer,
        UserRole::Operator,
        UserRole::None,
        UserRole::Locked,
        UserRole::Restricted,
    ];

    /// The word the Dashboard server uses, in lower case as `setUserRole` takes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            UserRole::Programmer => "programmer",
            UserRole::Operator => "operator",
            UserRole::None => "none",
            UserRole::Locked => "locked",
            UserRole::Restricted => "restricted",
        }
    }
}

impl FromStr for UserRole {
    type Err = String;

    /// Case-insensitive: `getUserRole` answers in upper case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UserRole::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                format!("unknown user role `{s}`: programmer, operator, none, locked or restricted")
            })
    }
}

/// An e-Series operational mode (`set operational mode`, `get operational mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperationalMode {
    /// Manual: reduced speed, the pendant in control.
    Manual,
    /// Automatic.
    Automatic,
}

impl OperationalMode {
    /// The word the Dashboard server uses, in lower case as `set operational mode` takes it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            OperationalMode::Manual => "manual",
            OperationalMode::Automatic => "automatic",
        }
    }
}

impl FromStr for OperationalMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "manual" => Ok(OperationalMode::Manual),
            "automatic" => Ok(OperationalMode::Automatic),
            _ => Err(format!(
                "unknown operational mode `{s}`: manual or automatic"
            )),
        }
    }
}
