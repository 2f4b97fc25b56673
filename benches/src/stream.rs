//! A receive buffer holding many output data packages of the reference recipe, as a client
//! finds it after a read, and the sans-IO path from bytes to a decoded recipe.

use rtde_core::protocol::{ControllerMessage, DataHeader, Frame, ProtocolVersion};
use rtde_core::{Error, FromPayload, OutputRecipe, StaticRecipe};

use crate::{Reference, floor, sample};

/// The output recipe id the packages carry.
pub const RECIPE_ID: u8 = 1;

/// The length of one data package of the reference recipe: header, recipe id, payload.
pub const PACKAGE_LEN: usize = 3 + 1 + Reference::PAYLOAD_SIZE;

/// How the reference recipe's data packages start, as the session knows once the recipe
/// is set up: it takes those by their header and everything else the general way.
pub const HEADER: DataHeader = DataHeader::new(
    ProtocolVersion::V2,
    Some(RECIPE_ID),
    Reference::PAYLOAD_SIZE,
)
.expect("the reference recipe fits a package");

/// The `timestamp` of package `i`: 500 Hz.
#[must_use]
pub fn timestamp_of(i: usize) -> f64 {
    f64::from(u32::try_from(i).unwrap_or(u32::MAX)) * 0.002
}

/// `n` protocol v2 data packages back to back, their timestamps 2 ms apart.
#[derive(Debug)]
pub struct Frames {
    bytes: Vec<u8>,
    count: usize,
}

impl Frames {
    /// The packages are encoded with the floor's encoder and rtde-core's package encoder.
    ///
    /// # Panics
    /// Never for the reference recipe: each package fits its buffer.
    #[must_use]
    pub fn new(n: usize) -> Frames {
        let mut bytes = vec![0; n * PACKAGE_LEN];
        for (i, out) in bytes.chunks_exact_mut(PACKAGE_LEN).enumerate() {
            let payload = floor::encode(&sample(timestamp_of(i)));
            let msg = ControllerMessage::DataPackage {
                recipe_id: Some(RECIPE_ID),
                payload: &payload,
            };
            let len = msg.encode(ProtocolVersion::V2, out).expect("fits");
            assert_eq!(len, PACKAGE_LEN);
        }
        Frames { bytes, count: n }
    }

    /// The packages' bytes.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// How many packages.
    #[must_use]
    pub fn count(&self) -> usize {
        self.count
    }
}

/// Takes the package at the front of `buf` as the session does: a data package of the
/// recipe by its header ([`HEADER`]), anything else through the frame parse and message
/// decode. Returns the recipe's values and the bytes the package took, or `None` for
/// anything but a whole data package of the recipe.
#[inline]
#[must_use]
pub fn take_values(buf: &[u8]) -> Option<(&[u8], usize)> {
    if let Some(values) = HEADER.payload(buf) {
        return Some((values, HEADER.package_len()));
    }
    general(buf)
}

/// The general way, out of line as the session's is: frame parse, message decode, recipe id.
#[inline(never)]
fn general(buf: &[u8]) -> Option<(&[u8], usize)> {
    let (frame, used) = Frame::parse(buf).ok()??;
    match ControllerMessage::decode(frame, ProtocolVersion::V2) {
        Ok(ControllerMessage::DataPackage {
            recipe_id: Some(RECIPE_ID),
            payload,
        }) => Some((payload, used)),
        _ => None,
    }
}

/// Takes the package at the front of `buf` ([`take_values`]) and decodes it: what a client
/// does for every package. Returns the recipe and the bytes the package took.
#[inline]
#[must_use]
pub fn parse_and_decode(buf: &[u8]) -> Option<(Reference, usize)> {
    let (values, used) = take_values(buf)?;
    Some((Reference::from_payload(values).ok()?, used))
}

/// [`parse_and_decode`] into a recipe the caller keeps, as `Client::recv_into` does: `used`
/// is set to the bytes the package took as soon as it is taken, before the decode, as the
/// session moves past a package before the client decodes it.
///
/// # Errors
/// A package that is malformed, incomplete, or not a data package of the recipe (`out`
/// unchanged).
#[inline]
pub fn parse_and_decode_into(
    buf: &[u8],
    out: &mut Reference,
    used: &mut usize,
) -> Result<(), Error> {
    let Some((values, n)) = take_values(buf) else {
        return Err(Error::Misuse("not a data package of the recipe"));
    };
    *used = n;
    out.decode_into(values).map_err(Error::Payload)
}

/// [`parse_and_decode`] shaped as `Client::recv_as`: the recipe in a `Result` with the
/// client's error, decoded by `from_payload_as` where the caller keeps it. `used` is set as
/// [`parse_and_decode_into`] sets it.
///
/// # Errors
/// A package that is malformed, incomplete, or not a data package of the recipe.
#[inline]
pub fn parse_and_decode_as(buf: &[u8], used: &mut usize) -> Result<Reference, Error> {
    let Some((values, n)) = take_values(buf) else {
        return Err(Error::Misuse("not a data package of the recipe"));
    };
    *used = n;
    Reference::from_payload_as(values)
}
